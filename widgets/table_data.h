// A table as text cells, and its CSV, JSON and Markdown forms for export.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

class QTableWidget;

namespace nope::ui {

struct TableData {
    QStringList header;
    QList<QStringList> rows;
};

// RFC 4180: fields with commas, quotes or line breaks are quoted, quotes doubled.
QString toCsv(const TableData& table);
// An array of objects keyed by the header; cells that read as numbers are written as numbers.
QByteArray toJson(const TableData& table);
// A GitHub-style pipe table.
QString toMarkdown(const TableData& table);

// Shows the table in a table widget (read-only cells, columns fitted to their contents).
void showTable(QTableWidget* widget, const TableData& table);

}  // namespace nope::ui
