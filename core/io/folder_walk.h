// core/io — walking the folders a command is given (`fit-profile` and
// `accuracy` take folders of measured files).
//
// Contract: a walk ends and never counts a file twice. Links to folders are
// not followed (a link to `.` or `/proc/self` would never end); a link to a
// file is read as that file, and each real file (device and inode) is
// listed once, under the first of its paths in sorted order, whichever way
// it is reached (a link, a hard link, a folder given twice). A walk visits
// at most kMaxWalkEntries entries and kMaxWalkDepth levels of folders, else
// it throws Error naming the folder; a folder it cannot read is an Error
// too, not a silent gap.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

inline constexpr std::size_t kMaxWalkEntries = 1'000'000;
inline constexpr int kMaxWalkDepth = 64;

// Every regular file under `dirs` whose name ends with `suffix`, sorted by
// path. A path in `dirs` that is not a folder is an OptionError.
std::vector<std::string> files_under(const std::vector<std::string>& dirs, std::string_view suffix);

}  // namespace schedlab
