// The fixture of the CLI's end-to-end tests: a fresh folder per test under the system's temporary
// folder, and the built executable run as a user would, its output captured.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_folder.h"
#include "common/text.h"

namespace nope::cli_test {

namespace fs = std::filesystem;

struct Result {
    int status = -1;
    std::string out;
    std::string err;
};

inline std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

using test::lines;

class Cli : public ::testing::Test {
protected:
    void SetUp() override {
        m_folder = std::make_unique<test::TestFolder>("cli-test");
        m_dir = m_folder->path();
    }
    void TearDown() override { m_folder.reset(); }

    // `env`: assignments for the command's environment ("PATH=/x NAME=value").
    Result run(const std::string& args, const std::string& env = "") {
        const fs::path out = m_dir / "stdout.txt", err = m_dir / "stderr.txt";
        const std::string command = (env.empty() ? "" : env + " ") + std::string(NOPESCOPE_CLI) +
                                    " " + args + " >" + out.string() + " 2>" + err.string();
        const int raw = std::system(command.c_str());
        Result r;
        r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }

    fs::path m_dir;

private:
    std::unique_ptr<test::TestFolder> m_folder;
};

}  // namespace nope::cli_test
