// The Explore tab: ask the current model about any input. A prompt field (characters outside the
// vocabulary are named beside it at once); as you type, the heatmaps of the embedding and every
// layer of the chosen capture point, each titled with its adjacency score, and the model's greedy
// answer with its exact-match verdict when the string is a prompt of the task. Pin a prompt and
// edit it: the pinned heatmaps, the new ones and their difference per layer, with the change in
// adjacency score. The prompts tried (Enter or Pin keeps one) are listed, and saved with the
// session. Draws value types (run/snapshot.h PromptAnalysis); the window sends the prompts to the
// model's thread and hands the answer back.
#pragma once

#include <QElapsedTimer>
#include <QStringList>
#include <QWidget>

#include <optional>
#include <string>
#include <vector>

#include "run/snapshot.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace nope::ui {

class HeatmapGrid;

class ExploreTab : public QWidget {
    Q_OBJECT

public:
    explicit ExploreTab(QWidget* parent = nullptr);

    QLineEdit* promptField() const { return m_prompt; }
    QPushButton* pinButton() const { return m_pin; }
    QListWidget* triedList() const { return m_tried; }
    HeatmapGrid* heatmaps(int row) const {
        return m_grids[row];
    }                         // 0 shown, 1 pinned, 2 difference
    QString problem() const;  // what is wrong with the typed prompt, empty when nothing
    QString answerText() const;
    QString timingText() const;
    QString pinnedPrompt() const { return m_pinned; }
    CapturePoint point() const;
    void setPoint(CapturePoint point);

    // The model's context: longer prompts are refused beside the field (0: not known yet).
    void setContext(int tokens);
    // Whether there is a model to ask; without one the tab says why (`whyNot`, or what to do).
    void setModelAvailable(bool available, const QString& whyNot = {});
    // Another model: the answers shown were the old one's and go; a typed prompt is asked again
    // once the new model is available.
    void forgetResult();
    // Asks again for the prompts shown (the model changed: a new snapshot, a loaded model).
    void refresh();

    // The prompts tried, most recent first; restoring replaces the list (a session).
    QStringList triedPrompts() const;
    // Each prompt must be in the vocabulary; returns the first problem (naming the entry), and
    // keeps the good ones.
    QString setTriedPrompts(const QStringList& prompts);

    // The model's answer for the prompts last asked (from the model's thread).
    void setResult(const PromptAnalysis& result);
    // `retry`: the model could not be asked yet (being built); retryIfWaiting() asks again.
    void setFailure(const QString& message, bool retry = false);
    void retryIfWaiting();

    // Keystroke to redraw, in milliseconds, of the last result drawn (-1: none yet).
    double lastLatencyMs() const { return m_lastLatencyMs; }

Q_SIGNALS:
    // Analyse these prompts with the current model: the typed one, then the pinned one if any.
    void analysisRequested(const std::vector<std::string>& prompts);
    // A result was drawn (for measurements and tests).
    void resultShown();

protected:
    void changeEvent(QEvent* event) override;

private:
    void onEdited();
    void request();
    void pin();
    void keepTried(const QString& prompt);
    void redraw();
    void showMessage(const QString& text);

    QLineEdit* m_prompt;
    QLabel* m_problem;
    QPushButton* m_pin;
    QComboBox* m_point;
    QLabel* m_answer;
    QLabel* m_timing;
    QLabel* m_rowTitles[3];
    HeatmapGrid* m_grids[3];
    QListWidget* m_tried;

    int m_context = 0;
    bool m_modelAvailable = false;
    QString m_whyNoModel;  // what the tab says without a model
    QString m_pinned;
    bool m_inFlight = false;
    bool m_pending = false;  // the prompt changed while a request was out: ask again on return
    bool m_retry = false;    // the model could not be asked yet: ask when it can
    QElapsedTimer m_sinceEdit;
    bool m_awaitingEdit = false;  // the last keystroke's answer has not been drawn yet
    double m_lastLatencyMs = -1.0;
    std::optional<PromptAnalysis> m_result;  // the last answer, for redraws on a new point
};

}  // namespace nope::ui
