// The generated documentation's pieces: text made safe for Markdown and roff, and a whole man
// page around the help of a program's flags (docs/cli.md, nopescope(1), nopescope-cli(1)).
#pragma once

#include <string>

namespace nope::cli {

// Text for a Markdown paragraph or table cell: the characters Markdown would read as markup
// (|, *, _, <, >, `, [, ], \) escaped.
std::string markdownText(const std::string& text);

// Text for a roff line: backslashes and hyphens escaped, a break point after each comma, and a
// line that would start with a control character ('.' or '\'') protected.
std::string roffText(const std::string& text);

struct ManPage {
    std::string name;         // "nopescope-cli"
    std::string summary;      // the NAME line after the dash
    std::string synopsis;     // roff
    std::string description;  // roff
    std::string body;         // roff: the sections after DESCRIPTION (.SH ...)
    std::string seeAlso;      // roff
};

// The page in section 1, with the project's version in its header and no date (the same
// sources give the same page).
std::string renderManPage(const ManPage& page, const std::string& version);

}  // namespace nope::cli
