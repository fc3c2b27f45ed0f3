// A fresh folder for one test under the system's temporary folder, named after the test and the
// process ("nopescope-<prefix>-<pid>-<suite>-<test>"), removed at the end. Only ever that folder:
// a test never removes a path that could be empty, relative or shared.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace nope::test {

class TestFolder {
public:
    explicit TestFolder(const std::string& prefix) {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_name = "nopescope-" + prefix + "-" + std::to_string(::getpid()) + "-" +
                 (info ? std::string(info->test_suite_name()) + "-" + info->name() : "");
        m_path = std::filesystem::temp_directory_path() / m_name;
        removeOwn();
        std::filesystem::create_directories(m_path);
    }
    ~TestFolder() { removeOwn(); }
    TestFolder(const TestFolder&) = delete;
    TestFolder& operator=(const TestFolder&) = delete;

    const std::filesystem::path& path() const { return m_path; }

private:
    void removeOwn() const {
        if (m_path.is_absolute() && m_path.filename() == m_name &&
            m_path.parent_path() == std::filesystem::temp_directory_path()) {
            std::filesystem::remove_all(m_path);
        }
    }

    std::string m_name;
    std::filesystem::path m_path;
};

}  // namespace nope::test
