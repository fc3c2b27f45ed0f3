#include "cli/help_pages.h"

#include <cctype>

namespace nope::cli {

std::string markdownText(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '|':
            case '*':
            case '_':
            case '`':
            case '[':
            case ']':
            case '\\':
                out += '\\';
                out += c;
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string roffText(const std::string& text) {
    std::string out;
    bool lineStart = true;
    for (char c : text) {
        if (lineStart && (c == '.' || c == '\'')) {
            out += "\\&";
        }
        if (c == '\\') {
            out += "\\e";
        } else if (c == '-') {
            out += "\\-";
        } else if (c == ',') {
            out += ",\\:";  // a line may break after a comma (lists without spaces)
        } else {
            out += c;
        }
        lineStart = c == '\n';
    }
    return out;
}

std::string renderManPage(const ManPage& page, const std::string& version) {
    std::string title;
    for (char c : page.name) {
        title += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    std::string out;
    out += ".TH " + roffText(title) + " 1 \"\" \"NoPEScope " + version + "\" \"User Commands\"\n";
    // left-aligned, without hyphenation: flag names and value lists stay whole
    out += ".nh\n.ad l\n";
    out += ".SH NAME\n" + roffText(page.name) + " \\- " + roffText(page.summary) + "\n";
    out += ".SH SYNOPSIS\n" + page.synopsis;
    out += ".SH DESCRIPTION\n" + page.description;
    out += page.body;
    out += ".SH SEE ALSO\n" + page.seeAlso;
    return out;
}

}  // namespace nope::cli
