#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include "cli/commands.h"
#include "core/util/error.h"

namespace schedlab::cli {

void write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  std::random_device rd;
  std::string tmp = path + ".tmp" + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot write file");
    out << text;
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      throw Error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot replace file");
  }
}

void exit_without_freeing() {
#ifndef __EMSCRIPTEN__
  std::fflush(nullptr);
  std::_Exit(0);
#endif
}

std::string ArgReader::value(const std::string& flag) {
  auto eq = flag.find('=');
  if (eq != std::string::npos) return flag.substr(eq + 1);
  if (done()) throw UsageError(flag + ": missing value");
  return next();
}

}  // namespace schedlab::cli
