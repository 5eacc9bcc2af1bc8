// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A fresh folder under the system's temporary one, removed with everything in it at the end of its
// scope; entries() counts what is in it (a test that nothing partial was left behind).
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <iterator>
#include <string>

namespace quell::test {

struct TempFolder {
    explicit TempFolder(const std::string& prefix)
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        path = ::mkdtemp(tmpl.data());
    }
    ~TempFolder() { std::filesystem::remove_all(path); }
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;
    std::size_t entries() const
    {
        return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path), std::filesystem::directory_iterator{}));
    }
    std::string path;
};

} // namespace quell::test
