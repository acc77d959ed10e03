// A reader of Python pickles made of plain data (dicts, lists, tuples,
// sets, strings, bytes, ints, floats, booleans, None), protocols 2 to 5:
// what torch.cuda.memory._dump_snapshot() writes (pickle.dump of the
// snapshot dict), read in the page as PyTorch's memory_viz reads it, with no
// server. A pickle that builds objects (a class, a function call) is
// refused: this reader runs nothing, it only rebuilds data.
//
// Ints beyond 2^53 (never in a snapshot: addresses are 48-bit) stay BigInt.

const decoder = new TextDecoder('utf-8');

export class PickleError extends Error {}

function small(n) {
  return n >= Number.MIN_SAFE_INTEGER && n <= Number.MAX_SAFE_INTEGER ? Number(n) : n;
}

// Little-endian two's complement ints of LONG1 / LONG4.
function longFrom(bytes) {
  if (!bytes.length) return 0;
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]);
  if (bytes[bytes.length - 1] & 0x80) v -= 1n << BigInt(8 * bytes.length);
  return small(v);
}

// bytes: a Uint8Array of the whole file. Returns the unpickled value.
export function unpickle(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const stack = [];
  const marks = [];
  const memo = new Map();
  const need = (n) => {
    if (pos + n > bytes.length) throw new PickleError(`pickle: truncated at byte ${pos} (needs ${n} more)`);
  };
  const u8 = () => { need(1); return bytes[pos++]; };
  const u16 = () => { need(2); const v = view.getUint16(pos, true); pos += 2; return v; };
  const u32 = () => { need(4); const v = view.getUint32(pos, true); pos += 4; return v; };
  const u64 = () => { need(8); const v = view.getBigUint64(pos, true); pos += 8; if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new PickleError(`pickle: length too large at byte ${pos - 8}`); return Number(v); };
  const take = (n) => { need(n); const s = bytes.subarray(pos, pos + n); pos += n; return s; };
  const text = (n) => decoder.decode(take(n));
  const popMark = () => {
    if (!marks.length) throw new PickleError(`pickle: no mark at byte ${pos - 1}`);
    const m = marks.pop();
    return stack.splice(m);
  };
  const top = () => {
    if (!stack.length) throw new PickleError(`pickle: empty stack at byte ${pos - 1}`);
    return stack[stack.length - 1];
  };
  const setItems = (dict, items) => {
    if (!(dict instanceof Object) || Array.isArray(dict)) throw new PickleError(`pickle: SETITEM on a non-dict at byte ${pos - 1}`);
    for (let i = 0; i + 1 < items.length; i += 2) dict[String(items[i])] = items[i + 1];
  };
  if (bytes.length < 2 || bytes[0] !== 0x80) throw new PickleError('pickle: expected a binary pickle (protocol 2 or later: first byte 0x80)');
  for (;;) {
    const at = pos;
    const op = u8();
    switch (op) {
      case 0x80: { const proto = u8(); if (proto < 2 || proto > 5) throw new PickleError(`pickle: protocol ${proto} not supported (2 to 5)`); break; }
      case 0x95: u64(); break;  // FRAME: a length hint
      case 0x2e: {  // STOP
        if (stack.length !== 1) throw new PickleError(`pickle: ${stack.length} values left at STOP`);
        return stack[0];
      }
      case 0x7d: stack.push({}); break;  // EMPTY_DICT
      case 0x5d: stack.push([]); break;  // EMPTY_LIST
      case 0x29: stack.push([]); break;  // EMPTY_TUPLE
      case 0x8f: stack.push([]); break;  // EMPTY_SET
      case 0x28: marks.push(stack.length); break;  // MARK
      case 0x73: { const v = stack.pop(); const k = stack.pop(); setItems(top(), [k, v]); break; }  // SETITEM
      case 0x75: { const items = popMark(); setItems(top(), items); break; }  // SETITEMS
      case 0x61: { const v = stack.pop(); const l = top(); if (!Array.isArray(l)) throw new PickleError(`pickle: APPEND to a non-list at byte ${at}`); l.push(v); break; }
      case 0x65: case 0x90: { const items = popMark(); const l = top(); if (!Array.isArray(l)) throw new PickleError(`pickle: APPENDS to a non-list at byte ${at}`); for (const x of items) l.push(x); break; }
      case 0x91: stack.push(popMark()); break;  // FROZENSET
      case 0x74: stack.push(popMark()); break;  // TUPLE
      case 0x85: stack.push([stack.pop()]); break;  // TUPLE1
      case 0x86: { const b = stack.pop(); const a = stack.pop(); stack.push([a, b]); break; }
      case 0x87: { const c = stack.pop(); const b = stack.pop(); const a = stack.pop(); stack.push([a, b, c]); break; }
      case 0x6c: stack.push(popMark()); break;  // LIST
      case 0x64: { const items = popMark(); const d = {}; setItems(d, items); stack.push(d); break; }  // DICT
      case 0x58: stack.push(text(u32())); break;  // BINUNICODE
      case 0x8c: stack.push(text(u8())); break;  // SHORT_BINUNICODE
      case 0x8d: stack.push(text(u64())); break;  // BINUNICODE8
      case 0x54: stack.push(text(u32())); break;  // BINSTRING
      case 0x55: stack.push(text(u8())); break;  // SHORT_BINSTRING
      case 0x42: stack.push(take(u32()).slice()); break;  // BINBYTES
      case 0x43: stack.push(take(u8()).slice()); break;  // SHORT_BINBYTES
      case 0x8e: stack.push(take(u64()).slice()); break;  // BINBYTES8
      case 0x96: stack.push(take(u64()).slice()); break;  // BYTEARRAY8
      case 0x4a: { need(4); stack.push(view.getInt32(pos, true)); pos += 4; break; }  // BININT
      case 0x4b: stack.push(u8()); break;  // BININT1
      case 0x4d: stack.push(u16()); break;  // BININT2
      case 0x8a: stack.push(longFrom(take(u8()))); break;  // LONG1
      case 0x8b: stack.push(longFrom(take(u32()))); break;  // LONG4
      case 0x47: { need(8); stack.push(view.getFloat64(pos, false)); pos += 8; break; }  // BINFLOAT
      case 0x4e: stack.push(null); break;  // NONE
      case 0x88: stack.push(true); break;
      case 0x89: stack.push(false); break;
      case 0x94: memo.set(memo.size, top()); break;  // MEMOIZE
      case 0x71: memo.set(u8(), top()); break;  // BINPUT
      case 0x72: memo.set(u32(), top()); break;  // LONG_BINPUT
      case 0x68: case 0x6a: {  // BINGET, LONG_BINGET
        const k = op === 0x68 ? u8() : u32();
        if (!memo.has(k)) throw new PickleError(`pickle: memo ${k} unknown at byte ${at}`);
        stack.push(memo.get(k));
        break;
      }
      case 0x30: stack.pop(); break;  // POP
      case 0x31: popMark(); break;  // POP_MARK
      case 0x32: stack.push(top()); break;  // DUP
      case 0x63: case 0x93: case 0x52: case 0x62: case 0x81: case 0x92: case 0x69: case 0x6f:
        throw new PickleError(`pickle: byte ${at} builds a Python object (opcode 0x${op.toString(16)}): a memory snapshot holds only plain data`);
      default:
        throw new PickleError(`pickle: unknown opcode 0x${op.toString(16)} at byte ${at}`);
    }
  }
}
