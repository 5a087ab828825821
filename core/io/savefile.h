// Writing the files a user names (export -o, calibrate -o): what QSaveFile is for the app, for
// envelope-cli. POSIX, Qt-free, in envelope_io beside the reader (the estimator does no I/O).
//
// A target is written in full or left as it was:
// - only a regular file (or a new one) is replaced: a device, a fifo, a socket or a folder is
//   refused with a message naming the path, and so is a read-only file;
// - a symlink is written through: its final target is replaced, the link stays a link;
// - the new file keeps the old one's permission bits (a new file gets 0666 less the umask);
// - the data goes to a temporary file created with mkstemp (an unpredictable name, O_EXCL) in
//   the target's folder, is fsync'ed, renamed over the target, and the folder is fsync'ed;
// - several files (the hf export's three) are committed together: all are written to temporary
//   files first, and a failure at any step leaves every target as it was.
// Messages name the user's paths, never a temporary file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/expected.h"

namespace envelope::io {

struct OutputFile {
    std::string path; // as the user wrote it
    std::string text;
};

// Writes every file, or none; nullopt on success.
std::optional<Error> saveFiles(const std::vector<OutputFile>& files);

inline std::optional<Error> saveFile(const std::string& path, const std::string& text)
{
    return saveFiles({ OutputFile { path, text } });
}

} // namespace envelope::io
