#include "widgets/theme_colors.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaEnum>
#include <QRegularExpression>

#include <array>
#include <iterator>
#include <stdexcept>
#include <string>

// Q_INIT_RESOURCE declares the resource's init function where it is used, so it must be used
// outside any namespace.
static void initNopescopeResources() {
    Q_INIT_RESOURCE(nopescope);
}

namespace nope::ui {

namespace {

constexpr const char* kFile = ":/theme.json";
constexpr size_t kColors = std::size(kThemeColorNames);

struct PaletteEntry {
    bool allGroups = true;  // a role given at the top level sets it in every colour group
    QPalette::ColorGroup group = QPalette::All;
    QPalette::ColorRole role = QPalette::Window;
    QColor color;
};

// Everything of theme.json, per palette: [0] light, [1] dark.
struct Theme {
    std::array<std::array<QColor, kColors>, 2> colors;
    std::array<std::vector<QColor>, 2> features;
    std::array<std::vector<QColor>, 2> runs;
    std::array<LayerHues, 2> hues;
    std::vector<std::pair<double, QColor>> heatmap;
    std::array<std::vector<PaletteEntry>, 2> palette;
};

[[noreturn]] void fail(const QString& where, const QString& why) {
    throw std::runtime_error(std::string(kFile) + ": " + where.toStdString() + ": " +
                             why.toStdString());
}

const char* paletteName(int dark) {
    return dark ? "dark" : "light";
}

QJsonObject objectAt(const QJsonObject& parent, const QString& key, const QString& where) {
    const QJsonValue v = parent.value(key);
    if (!v.isObject()) {
        fail(where + key, "missing or not an object");
    }
    return v.toObject();
}

double numberAt(const QJsonObject& parent, const QString& key, const QString& where) {
    const QJsonValue v = parent.value(key);
    if (!v.isDouble()) {
        fail(where + key, "missing or not a number");
    }
    return v.toDouble();
}

// "#rrggbb" or "#rrggbbaa" (aa: opacity).
QColor parseColor(const QJsonValue& value, const QString& where) {
    static const QRegularExpression kPattern("^#([0-9a-fA-F]{6})([0-9a-fA-F]{2})?$");
    const QRegularExpressionMatch m = kPattern.match(value.toString());
    if (!value.isString() || !m.hasMatch()) {
        fail(where, "expected a colour #rrggbb or #rrggbbaa, got '" + value.toString() + "'");
    }
    const uint rgb = m.captured(1).toUInt(nullptr, 16);
    const int alpha = m.captured(2).isEmpty() ? 255 : int(m.captured(2).toUInt(nullptr, 16));
    return QColor(int(rgb >> 16) & 0xff, int(rgb >> 8) & 0xff, int(rgb) & 0xff, alpha);
}

QPalette::ColorRole parseRole(const QString& name, const QString& where) {
    bool ok = false;
    const int role =
        QMetaEnum::fromType<QPalette::ColorRole>().keyToValue(name.toLatin1().constData(), &ok);
    if (!ok) {
        fail(where + name, "not a QPalette colour role");
    }
    return static_cast<QPalette::ColorRole>(role);
}

std::vector<PaletteEntry> parsePalette(const QJsonObject& roles, const QString& where) {
    std::vector<PaletteEntry> entries;
    std::vector<PaletteEntry> groupEntries;  // applied after the roles of every group
    for (auto it = roles.begin(); it != roles.end(); ++it) {
        if (it.value().isObject()) {
            bool ok = false;
            const int group = QMetaEnum::fromType<QPalette::ColorGroup>().keyToValue(
                it.key().toLatin1().constData(), &ok);
            if (!ok) {
                fail(where + it.key(), "not a QPalette colour group (Active, Inactive, Disabled)");
            }
            const QJsonObject groupRoles = it.value().toObject();
            const QString groupWhere = where + it.key() + ".";
            for (auto r = groupRoles.begin(); r != groupRoles.end(); ++r) {
                groupEntries.push_back({false, static_cast<QPalette::ColorGroup>(group),
                                        parseRole(r.key(), groupWhere),
                                        parseColor(r.value(), groupWhere + r.key())});
            }
        } else {
            entries.push_back({true, QPalette::All, parseRole(it.key(), where),
                               parseColor(it.value(), where + it.key())});
        }
    }
    entries.insert(entries.end(), groupEntries.begin(), groupEntries.end());
    return entries;
}

// A non-empty list of colours under `section`.`name` ("probeFeatures.light").
std::vector<QColor> parseColorList(const QJsonObject& section, const QString& sectionName,
                                   const QString& name) {
    const QJsonArray list = section.value(name).toArray();
    if (list.isEmpty()) {
        fail(sectionName + "." + name, "missing or empty");
    }
    std::vector<QColor> colors;
    for (int i = 0; i < list.size(); ++i) {
        colors.push_back(
            parseColor(list.at(i), QString("%1.%2[%3]").arg(sectionName, name).arg(i)));
    }
    return colors;
}

// list[index], coming round again past the last (and before the first)
QColor wrappedAt(const std::vector<QColor>& list, int index) {
    const int n = int(list.size());
    return list[size_t(((index % n) + n) % n)];
}

Theme loadTheme() {
    initResources();
    QFile file(kFile);
    if (!file.open(QIODevice::ReadOnly)) {
        fail("file", "cannot open: " + file.errorString());
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        fail(QString("offset %1").arg(error.offset), "not a JSON object: " + error.errorString());
    }
    const QJsonObject root = doc.object();
    Theme theme;

    const QJsonObject colors = objectAt(root, "colors", "");
    const QJsonObject features = objectAt(root, "probeFeatures", "");
    const QJsonObject runs = objectAt(root, "runCurves", "");
    const QJsonObject curves = objectAt(root, "layerCurves", "");
    const QJsonObject curveValues = objectAt(curves, "value", "layerCurves.");
    const QJsonObject palette = objectAt(root, "palette", "");
    for (int dark = 0; dark < 2; ++dark) {
        const QString name = paletteName(dark);
        const QJsonObject named = objectAt(colors, name, "colors.");
        for (size_t i = 0; i < kColors; ++i) {
            const QString key = kThemeColorNames[i].name;
            if (!named.contains(key)) {
                fail("colors." + name + "." + key, "missing");
            }
            theme.colors[dark][size_t(kThemeColorNames[i].value)] =
                parseColor(named.value(key), "colors." + name + "." + key);
        }
        theme.features[dark] = parseColorList(features, "probeFeatures", name);
        theme.runs[dark] = parseColorList(runs, "runCurves", name);
        theme.hues[dark] = {numberAt(curves, "hueFirst", "layerCurves."),
                            numberAt(curves, "hueLast", "layerCurves."),
                            numberAt(curves, "saturation", "layerCurves."),
                            numberAt(curveValues, name, "layerCurves.value.")};
        theme.palette[dark] =
            parsePalette(objectAt(palette, name, "palette."), "palette." + name + ".");
    }
    const QJsonArray stops = root.value("heatmap").toArray();
    if (stops.size() < 2) {
        fail("heatmap", "needs at least two stops");
    }
    for (int i = 0; i < stops.size(); ++i) {
        const QString where = QString("heatmap[%1].").arg(i);
        const QJsonObject stop = stops.at(i).toObject();
        const double at = numberAt(stop, "at", where);
        if (at < 0.0 || at > 1.0 || (!theme.heatmap.empty() && at <= theme.heatmap.back().first)) {
            fail(where + "at", "positions must rise within 0..1");
        }
        theme.heatmap.emplace_back(at, parseColor(stop.value("color"), where + "color"));
    }
    return theme;
}

const Theme& theme() {
    static const Theme loaded = loadTheme();
    return loaded;
}

}  // namespace

QColor themeColor(ThemeColor color, bool dark) {
    return theme().colors[dark ? 1 : 0].at(static_cast<size_t>(color));
}

QColor probeFeatureColor(int index, bool dark) {
    return wrappedAt(theme().features[dark ? 1 : 0], index);
}

QColor runCurveColor(int index, bool dark) {
    return wrappedAt(theme().runs[dark ? 1 : 0], index);
}

int runCurveColors() {
    return static_cast<int>(theme().runs[0].size());
}

LayerHues layerHues(bool dark) {
    return theme().hues[dark ? 1 : 0];
}

std::vector<std::pair<double, QColor>> heatmapStops() {
    return theme().heatmap;
}

void applyThemePalette(QPalette& palette, bool dark) {
    for (const PaletteEntry& e : theme().palette[dark ? 1 : 0]) {
        if (e.allGroups) {
            palette.setColor(e.role, e.color);
        } else {
            palette.setColor(e.group, e.role, e.color);
        }
    }
}

void initResources() {
    static const bool done = (initNopescopeResources(), true);
    (void)done;
}

}  // namespace nope::ui
