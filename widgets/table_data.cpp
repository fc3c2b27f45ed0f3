#include "widgets/table_data.h"

#include <QTableWidget>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace nope::ui {

namespace {

QString csvField(QString s) {
    if (s.contains(',') || s.contains('"') || s.contains('\n')) {
        s.replace("\"", "\"\"");
        return "\"" + s + "\"";
    }
    return s;
}

QString csvLine(const QStringList& cells) {
    QStringList out;
    for (const QString& c : cells) {
        out << csvField(c);
    }
    return out.join(',') + "\n";
}

QString markdownCell(QString s) {
    return s.replace("|", "\\|").replace("\n", " ");
}

}  // namespace

QString toCsv(const TableData& table) {
    QString out = csvLine(table.header);
    for (const QStringList& row : table.rows) {
        out += csvLine(row);
    }
    return out;
}

QByteArray toJson(const TableData& table) {
    QJsonArray rows;
    for (const QStringList& row : table.rows) {
        QJsonObject object;
        for (int c = 0; c < table.header.size() && c < row.size(); ++c) {
            bool number = false;
            const double v = row[c].toDouble(&number);
            object.insert(table.header[c], number ? QJsonValue(v) : QJsonValue(row[c]));
        }
        rows.append(object);
    }
    return QJsonDocument(rows).toJson(QJsonDocument::Indented);
}

QString toMarkdown(const TableData& table) {
    auto line = [](const QStringList& cells) {
        QStringList escaped;
        for (const QString& c : cells) {
            escaped << markdownCell(c);
        }
        return "| " + escaped.join(" | ") + " |\n";
    };
    QString out = line(table.header);
    QStringList rule;
    for (int c = 0; c < table.header.size(); ++c) {
        rule << (c == 0 ? "---" : "---:");
    }
    out += "| " + rule.join(" | ") + " |\n";
    for (const QStringList& row : table.rows) {
        out += line(row);
    }
    return out;
}

void showTable(QTableWidget* widget, const TableData& table) {
    widget->setColumnCount(static_cast<int>(table.header.size()));
    widget->setHorizontalHeaderLabels(table.header);
    widget->setRowCount(static_cast<int>(table.rows.size()));
    for (int r = 0; r < table.rows.size(); ++r) {
        for (int c = 0; c < table.header.size(); ++c) {
            auto* item = new QTableWidgetItem(table.rows[r].value(c));
            item->setFlags(item->flags() & ~Qt::ItemIsEditable);
            widget->setItem(r, c, item);
        }
    }
    widget->resizeColumnsToContents();
}

}  // namespace nope::ui
