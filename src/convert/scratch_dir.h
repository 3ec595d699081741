// A private temporary directory for one conversion (blob contents on their way between a
// database and the other end), removed with everything in it when the run ends.
#pragma once

#include <string>

namespace relstore {

class ScratchDir {
 public:
  // Under TMPDIR (or /tmp); StorageError when it cannot be made.
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // path()/name, as a string (not created).
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace relstore
