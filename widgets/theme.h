// Light and dark themes. "system" keeps the platform's style and palette (the window follows the
// system's choice at start); "light" and "dark" use Fusion with a fixed palette (its colours in
// resources/theme.json, theme_colors.h). Plots restyle themselves when the palette changes.
#pragma once

#include <QString>

namespace nope::ui {

// Remembers the platform's look; call once, before the first applyTheme.
void rememberSystemTheme();
// "system", "light" or "dark"; anything else is ignored.
void applyTheme(const QString& theme);

}  // namespace nope::ui
