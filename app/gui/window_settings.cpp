// The window on the user's screen: its first size (within the screen's available area), the
// arrangement by width (below kNarrowWidth the curves go under the views, side by side), the
// views that scroll inside their tabs, and what is kept between sessions (QSettings: size and
// place, splitters, the last task and preset, the theme). Part of MainWindow, in a file of its
// own.
#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QGuiApplication>
#include <QResizeEvent>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>

#include "gui/main_window.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/theme.h"

namespace nope::gui {

namespace {

constexpr const char* kGeometry = "window/geometry";
constexpr const char* kTask = "form/task";
constexpr const char* kPreset = "form/preset";
constexpr const char* kTheme = "view/theme";

QString splitterKey(const char* which, bool narrow) {
    return QString("window/%1-splitter-%2").arg(which, narrow ? "narrow" : "wide");
}

}  // namespace

QScrollArea* MainWindow::scrolled(QWidget* view) {
    auto* area = new QScrollArea;
    area->setWidget(view);
    area->setWidgetResizable(true);  // the view fills the tab, and scrolls below its minimum
    area->setFrameShape(QFrame::NoFrame);
    return area;
}

void MainWindow::showView(QWidget* view) {
    for (QWidget* w = view; w; w = w->parentWidget()) {
        if (m_views->indexOf(w) >= 0) {
            m_views->setCurrentWidget(w);
            return;
        }
    }
}

QWidget* MainWindow::currentView() const {
    QWidget* tab = m_views->currentWidget();
    auto* area = qobject_cast<QScrollArea*>(tab);
    return area ? area->widget() : tab;
}

QSize MainWindow::available() const {
    const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
    if (!screen) {
        return QSize(1500, 900);
    }
    // room for the desktop's own frame around the window
    return screen->availableGeometry().size() - QSize(16, 48);
}

QSize MainWindow::defaultSize() const {
    return QSize(1500, 900).boundedTo(available());
}

int MainWindow::wideWidth() const {
    // the form's column, every tab of the views in view (no scroll arrows), the curves' column
    return m_mainSplit->widget(0)->minimumSizeHint().width() + tabsWidth() + kCurvesWidth +
           3 * m_mainSplit->handleWidth() + 24;
}

int MainWindow::tabsWidth() const {
    return m_views->tabBar()->sizeHint().width() + 4;
}

void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    const bool narrow = event->size().width() < wideWidth();
    if (narrow != m_narrow) {
        arrange(narrow);
    }
    if (!m_narrow) {
        QTimer::singleShot(0, this, &MainWindow::fitTabs);  // once the splitter has its width
    }
}

// In the wide arrangement the views' column keeps room for every tab: what it lacks comes from
// the curves' column, then the form's, down to their minimums.
void MainWindow::fitTabs() {
    if (m_narrow || m_curves->parentWidget() != m_mainSplit) {
        return;
    }
    QList<int> sizes = m_mainSplit->sizes();
    int lack = tabsWidth() - sizes[1];
    const int mins[] = {m_mainSplit->widget(0)->minimumSizeHint().width(), 0, kCurvesWidth};
    for (int column : {2, 0}) {
        const int give = std::clamp(sizes[column] - mins[column], 0, std::max(0, lack));
        sizes[column] -= give;
        sizes[1] += give;
        lack -= give;
    }
    if (sizes != m_mainSplit->sizes()) {
        m_mainSplit->setSizes(sizes);
    }
}

// Wide: form | views over the score table | curves one above the other. Narrow: form | views
// over the score table over the curves side by side, so that the views keep room for their tabs.
void MainWindow::arrange(bool narrow) {
    m_narrow = narrow;
    if (narrow) {
        m_centerSplit->addWidget(m_curves);  // moves it out of the main splitter
        m_curves->setOrientation(Qt::Horizontal);
        m_curves->setMinimumWidth(0);
        m_centerSplit->setStretchFactor(2, 2);
        QTimer::singleShot(0, this, [this] {  // once the splitter has its height
            const int h = m_centerSplit->height();
            if (m_narrow && m_centerSplit->count() == 3 && !restoredSplitter("center", true)) {
                m_centerSplit->setSizes({h * 55 / 100, h * 15 / 100, h * 30 / 100});
            }
        });
    } else {
        m_mainSplit->addWidget(m_curves);
        m_curves->setOrientation(Qt::Vertical);
        m_curves->setMinimumWidth(kCurvesWidth);
        m_mainSplit->setStretchFactor(2, 2);
    }
    restoredSplitter("main", narrow);
    restoredSplitter("center", narrow);
}

bool MainWindow::restoredSplitter(const char* which, bool narrow) {
    if (!m_persist) {
        return false;
    }
    const QVariant state = QSettings().value(splitterKey(which, narrow));
    QSplitter* splitter = QString(which) == "main" ? m_mainSplit : m_centerSplit;
    return state.isValid() && splitter->restoreState(state.toByteArray());
}

void MainWindow::restoreSettings() {
    m_persist = true;
    QSettings settings;
    if (!restoreGeometry(settings.value(kGeometry).toByteArray())) {
        resize(defaultSize());
    }
    // a size kept from a larger screen: back within this one
    const QSize fits = defaultSize().expandedTo(QSize(1024, 700)).boundedTo(available());
    if (width() > available().width() || height() > available().height()) {
        resize(size().boundedTo(fits));
    }
    arrange(width() < wideWidth());
    const QString task = settings.value(kTask).toString();
    const QString preset = settings.value(kPreset).toString();
    if (!task.isEmpty() && m_form->taskChoice()->findText(task) >= 0) {
        m_form->taskChoice()->setCurrentText(task);
    }
    if (!preset.isEmpty() && m_form->presetChoice()->findText(preset) >= 0) {
        m_form->presetChoice()->setCurrentText(preset);
    }
    const QString theme = settings.value(kTheme, "system").toString();
    for (QAction* action : m_themes->actions()) {
        if (action->text() == theme) {
            action->trigger();
        }
    }
}

void MainWindow::saveSettings() {
    if (!m_persist) {
        return;
    }
    QSettings settings;
    settings.setValue(kGeometry, saveGeometry());
    settings.setValue(splitterKey("main", m_narrow), m_mainSplit->saveState());
    settings.setValue(splitterKey("center", m_narrow), m_centerSplit->saveState());
    settings.setValue(kTask, m_form->taskChoice()->currentText());
    settings.setValue(kPreset, m_form->presetChoice()->currentText());
    if (QAction* theme = m_themes->checkedAction()) {
        settings.setValue(kTheme, theme->text());
    }
}

}  // namespace nope::gui
