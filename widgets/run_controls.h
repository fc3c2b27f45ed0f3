// The run's buttons (Initialize, Train, Pause/Resume, Stop, Reset) and its progress: a bar with
// the step, and a line with throughput, time left and the latest test accuracy.
#pragma once

#include <QWidget>

#include "run/snapshot.h"

class QLabel;
class QProgressBar;
class QPushButton;

namespace nope::ui {

class RunControls : public QWidget {
    Q_OBJECT

public:
    enum class State { Empty, Busy, Ready, Training, Paused };

    explicit RunControls(QWidget* parent = nullptr);

    // Enables what makes sense in `state`; `formValid` gates Initialize and a fresh Train;
    // `trained` (a model past step 0) turns Train into Continue; a non-empty `notTrainable` says
    // why Train is off for the model shown (its tooltip).
    void setState(State state, bool formValid, bool trained, const QString& notTrainable = {});
    void showProgress(const Snapshot& progress);
    void clearProgress();
    QString progressText() const;  // the line under the bar: step, speed, time left, accuracy

    QPushButton* initializeButton() const { return m_initialize; }
    QPushButton* trainButton() const { return m_train; }
    QPushButton* pauseButton() const { return m_pause; }
    QPushButton* stopButton() const { return m_stop; }
    QPushButton* resetButton() const { return m_reset; }

Q_SIGNALS:
    void initializeClicked();
    void trainClicked();
    void pauseClicked();  // pause or resume, by state
    void stopClicked();
    void resetClicked();

private:
    QPushButton* m_initialize;
    QPushButton* m_train;
    QPushButton* m_pause;
    QPushButton* m_stop;
    QPushButton* m_reset;
    QProgressBar* m_progress;
    QLabel* m_text;
};

// "1m05s", "2h03m"
QString formatDuration(double seconds);

}  // namespace nope::ui
