// Export all into a folder: it holds one subject at a time, named in export.json with the files
// written; what an earlier export wrote and this one did not goes, and nothing else is touched.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "widgets/export.h"
#include "widgets/qcp.h"

namespace nope {
namespace {

ui::TableData tableOf(const QString& stage) {
    ui::TableData t;
    t.header = {"stage", "value"};
    t.rows = {{stage, "1"}};
    return t;
}

QJsonObject manifestIn(const QDir& dir) {
    QFile f(dir.filePath("export.json"));
    EXPECT_TRUE(f.open(QIODevice::ReadOnly));
    return QJsonDocument::fromJson(f.readAll()).object();
}

void writeFile(const QString& path, const QByteArray& text) {
    QFile f(path);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(text);
}

TEST(Export, AFolderHoldsOneSubjectAndNothingElseIsTouched) {
    QTemporaryDir tmp;
    const QDir dir(tmp.path());
    writeFile(dir.filePath("probes.csv"), "a run's own table\n");  // no export.json yet
    writeFile(dir.filePath("notes.txt"), "mine\n");

    QCustomPlot plot;
    plot.resize(300, 200);
    ui::ExportSet first;
    first.heatmaps = &plot;
    first.scores = tableOf("init");
    first.attention = tableOf("attention");
    first.config = "{}\n";
    first.subject = R"({"origin": "trained", "task": "reversal", "shown_step": 20})";
    first.caption = "reversal, 2 layers x 64 · run r · step 20";
    ASSERT_TRUE(ui::exportAll(first, dir.path(), 1.0).isEmpty());
    EXPECT_EQ(QFile(dir.filePath("probes.csv")).size(), 18);  // not the export's: kept
    EXPECT_TRUE(dir.exists("attention.csv"));
    QJsonObject manifest = manifestIn(dir);
    EXPECT_EQ(manifest["subject"].toObject()["task"].toString(), "reversal");
    EXPECT_TRUE(manifest["files"].toArray().contains("heatmaps.png"));
    EXPECT_TRUE(manifest["files"].toArray().contains("attention.md"));
    EXPECT_FALSE(manifest["files"].toArray().contains("probes.csv"));
    EXPECT_EQ(plot.plotLayout()->rowCount(), 1);  // the caption was there for the export only

    // another subject with no attention table: the first export's attention files go
    ui::ExportSet second = first;
    second.attention = {};
    second.subject = R"({"origin": "initialized", "task": "addition", "shown_step": 0})";
    ASSERT_TRUE(ui::exportAll(second, dir.path(), 1.0).isEmpty());
    for (const char* gone : {"attention.csv", "attention.json", "attention.md"}) {
        EXPECT_FALSE(dir.exists(gone)) << gone;
    }
    EXPECT_TRUE(dir.exists("probes.csv"));
    EXPECT_TRUE(dir.exists("notes.txt"));
    EXPECT_TRUE(dir.exists("heatmaps.svg"));
    EXPECT_EQ(manifestIn(dir)["subject"].toObject()["task"].toString(), "addition");
}

}  // namespace
}  // namespace nope
