// The Probes tab: the probe panel (init against the shown step) with what runs probes on the
// current model: the probe size and data, a Run probes button and a progress bar.
#pragma once

#include <QWidget>

#include "probe/probe_config.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;

namespace nope::ui {

class ProbePanel;

class ProbeTab : public QWidget {
    Q_OBJECT

public:
    explicit ProbeTab(QWidget* parent = nullptr);

    ProbePanel* panel() const { return m_panel; }
    QPushButton* runButton() const { return m_run; }
    QPushButton* cancelButton() const { return m_cancel; }
    // The probe settings to run: `base` (the form's, for the seed and length) with the size and
    // data chosen here.
    ProbeConfig config(const ProbeConfig& base) const;
    // Whether Run probes can be pressed (a model exists and nothing else blocks the worker).
    void setRunnable(bool runnable);
    // Progress of a running probe set; done == total (or total 0: cancelled) ends it, and Cancel
    // can be pressed while it runs.
    void showProgress(int done, int total);
    void showMessage(const QString& message);
    QString message() const;

Q_SIGNALS:
    void runClicked();
    void cancelClicked();

private:
    ProbePanel* m_panel;
    QComboBox* m_size;
    QComboBox* m_data;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_message;
};

}  // namespace nope::ui
