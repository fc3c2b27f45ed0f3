// The Compare tab: the run browser above, and for the ticked runs their curves and scores
// overlaid (CompareCurves) or two snapshots side by side with their difference (SideBySide).
#pragma once

#include <QWidget>

class QTabWidget;

namespace nope::ui {

class CompareCurves;
class RunBrowser;
class SideBySide;

class CompareTab : public QWidget {
    Q_OBJECT

public:
    explicit CompareTab(QWidget* parent = nullptr);

    RunBrowser* browser() const { return m_browser; }
    CompareCurves* curves() const { return m_curves; }
    SideBySide* sideBySide() const { return m_side; }
    QTabWidget* views() const { return m_views; }
    QString problem() const { return m_problem; }  // runs whose tables could not be read

Q_SIGNALS:
    // A ticked run whose tables could not be read (it is left out of the comparison).
    void problemFound(const QString& message);

private:
    void load();

    RunBrowser* m_browser;
    CompareCurves* m_curves;
    SideBySide* m_side;
    QTabWidget* m_views;
    QString m_problem;
};

}  // namespace nope::ui
