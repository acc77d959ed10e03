// POSIX directory walk (std::filesystem is not in every toolchain the CLI
// builds with, WebAssembly included).
#include "core/io/folder_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "core/graph/builder.h"
#include "core/util/error.h"

namespace schedlab {
namespace {

using Identity = std::pair<dev_t, ino_t>;

struct Walk {
  std::string_view suffix;
  std::set<Identity> folders;  // visited: a folder reached twice is walked once
  std::size_t entries = 0;
  struct Found {
    std::string path;
    Identity id;
  };
  std::vector<Found> found;

  bool wanted(const std::string& name) const {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }

  // `depth` 0: a folder named on the command line, which may be a link;
  // below it O_NOFOLLOW opens the folder lstat saw, not a link swapped in since.
  void folder(const std::string& dir, int depth) {
    if (depth > kMaxWalkDepth) throw Error(quoted_name(dir) + ": folders nested deeper than " + std::to_string(kMaxWalkDepth) + " levels");
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (depth > 0 ? O_NOFOLLOW : 0));
    if (fd < 0) throw Error(quoted_name(dir) + ": cannot read folder: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !folders.insert({st.st_dev, st.st_ino}).second) {
      ::close(fd);
      return;
    }
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      throw Error(quoted_name(dir) + ": cannot read folder: " + std::strerror(errno));
    }
    std::vector<std::string> subfolders;
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (++entries > kMaxWalkEntries) {
        ::closedir(d);
        throw Error(quoted_name(dir) + ": more than " + std::to_string(kMaxWalkEntries) + " entries under the folders given");
      }
      const std::string path = dir + "/" + name;
      struct stat lst {};
      if (::lstat(path.c_str(), &lst) != 0) continue;  // gone since readdir
      if (S_ISDIR(lst.st_mode)) {
        subfolders.push_back(path);
      } else if (wanted(name)) {
        struct stat fst = lst;
        if (S_ISLNK(lst.st_mode) && ::stat(path.c_str(), &fst) != 0) continue;  // a dangling link
        if (S_ISREG(fst.st_mode)) found.push_back({path, {fst.st_dev, fst.st_ino}});
      }
    }
    ::closedir(d);
    for (const std::string& sub : subfolders) folder(sub, depth + 1);
  }
};

}  // namespace

std::vector<std::string> files_under(const std::vector<std::string>& dirs, std::string_view suffix) {
  Walk walk{suffix, {}, 0, {}};
  for (std::string d : dirs) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    struct stat st {};
    if (::stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw OptionError(d + ": not a folder");  // as the user typed it
    walk.folder(d, 0);
  }
  std::sort(walk.found.begin(), walk.found.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  std::set<Identity> seen;
  std::vector<std::string> out;
  for (const auto& f : walk.found)
    if (seen.insert(f.id).second) out.push_back(f.path);
  // Every message about a file starts with its path: one with a control
  // character would break the line.
  for (const std::string& p : out)
    if (std::any_of(p.begin(), p.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      throw Error(quoted_name(p) + ": a file name with a control character");
  return out;
}

}  // namespace schedlab
