// <schedlab-view>: the embeddable widget (schedlab-view.js). Importing the
// package in a page (or a bundler's browser build) defines the element:
//
//   import 'schedlab-view';
//   <schedlab-view src="graph.json" passes="lpmf,bfs" height="200"></schedlab-view>

/** The element's attributes (all strings in HTML). */
export interface SchedlabViewAttributes {
  /** URL of a schedgraph/1 file, relative to the page (required). */
  src: string;
  /** Comma-separated memory methods and comm passes to run (default: the CLI's defaults). */
  passes?: string;
  /** Chart height in pixels (default 220). */
  height?: number | string;
}

/** The element: it plans `src` in the page's shared worker and renders the summary and the memory curve. */
export interface SchedlabViewElement extends HTMLElement {
  getAttribute(name: keyof SchedlabViewAttributes): string | null;
  getAttribute(name: string): string | null;
  setAttribute(name: keyof SchedlabViewAttributes, value: string): void;
  setAttribute(name: string, value: string): void;
}

declare global {
  interface HTMLElementTagNameMap {
    'schedlab-view': SchedlabViewElement;
  }
}

export {};
