// The window's Export menu and Export all: each figure and table of the panels and the run's
// config, written where the user picks (widgets/export.h writes the files). The window gives it
// an ExportSet source, read at export time so that it holds what is shown then.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>

#include "widgets/export.h"

class QMenu;
class QWidget;

namespace nope::gui {

class ExportMenu : public QObject {
    Q_OBJECT

public:
    // `source` gathers what to export (after the window redrew); `report` shows an error, or
    // the done message when there is none.
    ExportMenu(QWidget* window, std::function<ui::ExportSet()> source,
               std::function<void(const QString& error, const QString& done)> report);

    // Adds the Export submenu and Export all to `file`.
    void addTo(QMenu* file);
    // Writes everything into `dir`; returns the problems, if any.
    QStringList exportAll(const QString& dir, double scale);

private:
    void exportPlot(QCustomPlot* ui::ExportSet::*plot, const QString& name);
    void exportTable(ui::TableData ui::ExportSet::*table, const QString& title,
                     const QString& name);
    void exportConfig();
    void exportAllInteractive();

    QWidget* m_window;
    std::function<ui::ExportSet()> m_source;
    std::function<void(const QString&, const QString&)> m_report;
};

}  // namespace nope::gui
