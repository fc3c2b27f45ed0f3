// The Help menu's windows: the user guide (the README and docs/ pages, rendered from their
// Markdown, links followed), the keyboard shortcuts and About.
#pragma once

#include <QString>

class QWidget;

namespace nope::gui {

// The folder that holds README.md and docs/: the installed guide (<prefix>/share/doc/nopescope
// beside the executable's bin/), else the repository the program was built from. Empty when
// neither has docs/window.md.
QString userGuideFolder();

// Opens the guide at `page` (relative to userGuideFolder(), "docs/window.md") in a window of its
// own, or says where it looked when there is no guide.
void showUserGuide(QWidget* parent, const QString& page);

// The text of About: version, LibTorch and Qt, the CPU and how it runs bf16 products, the paper.
QString aboutText();

}  // namespace nope::gui
