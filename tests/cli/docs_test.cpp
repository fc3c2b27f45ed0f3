// The documentation as a reader meets it: docs/cli.md is what the binary prints, every relative
// link of the README and docs/ leads somewhere, and the man pages are well-formed roff.
#include <cctype>
#include <regex>
#include <set>

#include "cli/cli_fixture.h"

namespace nope::cli_test {
namespace {

const fs::path kSource = NOPESCOPE_SOURCE_DIR;

class Docs : public Cli {};

// The first line where two texts differ, as "line N: 'a' / 'b'".
std::string firstDifference(const std::string& a, const std::string& b) {
    const auto la = lines(a), lb = lines(b);
    for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
        const std::string x = i < la.size() ? la[i] : "(end)";
        const std::string y = i < lb.size() ? lb[i] : "(end)";
        if (x != y) {
            return "line " + std::to_string(i + 1) + ":\n  committed: " + x + "\n  binary:    " + y;
        }
    }
    return "the same lines";
}

TEST_F(Docs, CliPageIsTheBinarysHelp) {
    const Result r = run("help --markdown");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string committed = slurp(kSource / "docs" / "cli.md");
    EXPECT_EQ(committed, r.out)
        << "docs/cli.md differs from `nopescope-cli help --markdown`; regenerate it with "
           "`cmake --build build --target cli-docs`. First difference at "
        << firstDifference(committed, r.out);
    // Every command and every flag of train's help is on the page.
    for (const char* heading : {"## `nopescope-cli train`", "## `nopescope-cli mechanism ablate`",
                                "## `nopescope-cli reproduce`", "## Settings"}) {
        EXPECT_NE(r.out.find(heading), std::string::npos) << heading;
    }
    const Result train = run("train --help");
    std::regex flag(R"(^  (--\S+))");
    for (const auto& line : lines(train.out)) {
        std::smatch m;
        if (std::regex_search(line, m, flag)) {
            EXPECT_NE(r.out.find("`" + m[1].str()), std::string::npos) << m[1];
        }
    }
}

// GitHub's anchor of a heading: lower case, punctuation other than '-' and '_' removed, spaces
// as '-'.
std::string slug(const std::string& heading) {
    std::string out;
    for (unsigned char c : heading) {
        if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80) {
            out += static_cast<char>(std::tolower(c));
        } else if (c == ' ') {
            out += '-';
        }
    }
    return out;
}

struct Page {
    std::set<std::string> anchors;
    std::vector<std::pair<int, std::string>> links;  // line number, target
};

// The headings' anchors and the links of a Markdown file, outside code blocks and code spans.
Page readPage(const fs::path& path) {
    Page page;
    std::map<std::string, int> seen;
    bool code = false;
    int number = 0;
    const std::regex link(R"(\]\(([^)\s]+)\))");
    for (std::string line : lines(slurp(path))) {
        ++number;
        if (line.rfind("```", 0) == 0) {
            code = !code;
            continue;
        }
        if (code) {
            continue;
        }
        if (line.rfind("#", 0) == 0) {
            const size_t text = line.find_first_not_of('#');
            if (text != std::string::npos && line[text] == ' ') {
                const std::string base = slug(line.substr(text + 1));
                const int n = seen[base]++;
                page.anchors.insert(n == 0 ? base : base + "-" + std::to_string(n));
            }
        }
        line = std::regex_replace(line, std::regex("`[^`]*`"), "");
        for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
            page.links.push_back({number, (*it)[1].str()});
        }
    }
    return page;
}

TEST_F(Docs, EveryLinkResolves) {
    std::vector<fs::path> files = {kSource / "README.md", kSource / "CONTRIBUTING.md",
                                   kSource / "resources" / "README.md"};
    for (const auto& entry : fs::directory_iterator(kSource / "docs")) {
        if (entry.path().extension() == ".md") {
            files.push_back(entry.path());
        }
    }
    std::map<fs::path, Page> pages;
    for (const auto& f : files) {
        pages[fs::weakly_canonical(f)] = readPage(f);
    }
    int checked = 0;
    for (const auto& f : files) {
        for (const auto& [line, target] : pages[fs::weakly_canonical(f)].links) {
            if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 ||
                target.rfind("mailto:", 0) == 0) {
                continue;
            }
            ++checked;
            const std::string where =
                f.lexically_relative(kSource).string() + ":" + std::to_string(line) + ": " + target;
            const size_t hash = target.find('#');
            const std::string file = target.substr(0, hash);
            const fs::path resolved =
                fs::weakly_canonical(file.empty() ? f : f.parent_path() / file);
            ASSERT_TRUE(fs::exists(resolved)) << where << " (no such file)";
            if (hash == std::string::npos || resolved.extension() != ".md") {
                continue;
            }
            if (!pages.count(resolved)) {
                pages[resolved] = readPage(resolved);
            }
            EXPECT_TRUE(pages[resolved].anchors.count(target.substr(hash + 1)))
                << where << " (no such heading)";
        }
    }
    EXPECT_GT(checked, 100);  // the guide is linked together
    EXPECT_LE(lines(slurp(kSource / "README.md")).size(), 200u) << "the README is the front door";
}

TEST_F(Docs, ManPageIsRoffThatManReads) {
    const Result r = run("help --man");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.rfind(".TH NOPESCOPE\\-CLI 1 ", 0), 0u) << r.out.substr(0, 80);
    for (const char* section :
         {".SH NAME\nnopescope\\-cli \\- ", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS",
          ".SH \"NOPESCOPE\\-CLI TRAIN\"", ".SH SETTINGS", ".SH \"EXIT STATUS\"", ".SH SEE ALSO"}) {
        EXPECT_NE(r.out.find(section), std::string::npos) << section;
    }
    for (const auto& line : lines(r.out)) {
        // a line starting with '.' or '\'' is a request: only the macros the page uses
        if (!line.empty() && (line[0] == '.' || line[0] == '\'')) {
            EXPECT_TRUE(std::regex_match(
                line, std::regex(R"(\.(TH|SH|SS|TP|PP|B|BR|nf|fi|br|nh|ad)( .*)?)")))
                << line;
        }
    }
    if (std::system("command -v groff >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "groff is not installed: the page was not typeset";
    }
    const fs::path page = m_dir / "nopescope-cli.1";
    std::ofstream(page) << r.out;
    const fs::path warnings = m_dir / "groff.txt";
    const std::string command =
        "groff -man -Tutf8 -ww -z " + page.string() + " 2>" + warnings.string();
    EXPECT_EQ(std::system(command.c_str()), 0);
    EXPECT_EQ(slurp(warnings), "") << "groff's warnings on the man page";
}

}  // namespace
}  // namespace nope::cli_test
