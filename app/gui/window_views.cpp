// The window's history of snapshots and the views drawn from it: snapshots, evaluations, live
// losses and probes come in; one redraw (at most ten a second) fills every view with the shown
// step of the subject. Part of MainWindow, in a file of its own.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSlider>

#include <algorithm>

#include "gui/main_window.h"
#include "widgets/attention_tab.h"
#include "widgets/config_form.h"
#include "widgets/curve_panel.h"
#include "widgets/heatmap_grid.h"
#include "widgets/probe_panel.h"
#include "widgets/probe_tab.h"
#include "widgets/projector_tab.h"
#include "widgets/run_controls.h"
#include "widgets/score_table.h"

namespace nope::gui {

namespace {

QString heatmapTitle(const LayerScores& row) {
    const QString name = row.layer == 0 ? QString("embedding") : QString("layer %1").arg(row.layer);
    return QString("%1  %2 ± %3")
        .arg(name)
        .arg(row.adjacencyMean, 0, 'f', 3)
        .arg(row.adjacencyStd, 0, 'f', 3);
}

}  // namespace

void MainWindow::addProbes(const ProbeReport& report, int step) {
    m_history.addProbes(report, step);
    m_probes->showMessage(QString("step %1: %2 probes in %3 s")
                              .arg(step)
                              .arg(report.results.size())
                              .arg(report.seconds, 0, 'f', 1));
    scheduleRedraw();
}

void MainWindow::resetHistory(std::vector<Snapshot> history) {
    m_history.reset(std::move(history));
    m_followLatest = true;
    m_slider->blockSignals(true);
    m_slider->setRange(0, std::max(0, static_cast<int>(m_history.size()) - 1));
    m_slider->setValue(m_slider->maximum());
    m_slider->blockSignals(false);
    updateViewChoices();
    scheduleRedraw();
}

void MainWindow::addSnapshot(const Snapshot& snapshot) {
    m_history.add(snapshot);  // e.g. Train's step-0 snapshot replaces Initialize's
    if (m_subject.origin != SubjectOrigin::ModelFile) {
        m_subject.step = std::max(m_subject.step, snapshot.step);
    }
    const bool follow = m_followLatest;
    m_slider->blockSignals(true);
    m_slider->setRange(0, static_cast<int>(m_history.size()) - 1);
    if (follow) {
        m_slider->setValue(m_slider->maximum());
    }
    m_slider->blockSignals(false);
    // a run's progress; a model file's step is not a run's (its steps to go are unknown)
    if ((snapshot.step > 0 || snapshot.eval.total > 0) &&
        m_subject.origin != SubjectOrigin::ModelFile) {
        m_controls->showProgress(snapshot);
    }
    if (snapshot.analysis.nonFinite) {  // the heatmaps of those layers mean nothing: say why
        showProblem(QString("Step %1: %2.")
                        .arg(snapshot.step)
                        .arg(QString::fromStdString(snapshot.analysis.nonFiniteMessage())));
    }
    updateViewChoices();
    scheduleRedraw();
}

void MainWindow::addEvaluation(const Snapshot& progress) {
    if (m_subject.origin == SubjectOrigin::Trained && runGoing()) {
        m_subject.liveStep = progress.step;
    }
    if (progress.eval.total > 0 && !progress.eval.cancelled) {
        m_history.addEvaluation(
            {progress.eval.step, progress.eval.testLoss, progress.eval.accuracy});
        scheduleRedraw();
    }
}

void MainWindow::scheduleRedraw() {
    if (m_redrawTimer.isActive()) {
        return;  // snapshots that come faster are folded into the redraw already due
    }
    // at most one redraw per 100 ms, counted from the previous one: a snapshot after a quiet
    // spell is drawn at once (still queued, so that a burst of snapshots is drawn once)
    const qint64 since = m_sinceRedraw.isValid() ? m_sinceRedraw.elapsed() : kRedrawIntervalMs;
    m_redrawTimer.start(static_cast<int>(std::max<qint64>(0, kRedrawIntervalMs - since)));
}

const Snapshot* MainWindow::current() const {
    const int index = m_slider->value();
    if (m_history.empty() || index < 0 || index >= static_cast<int>(m_history.size())) {
        return nullptr;
    }
    return &m_history[static_cast<size_t>(index)];
}

void MainWindow::updateViewChoices() {
    const Snapshot* s = current();
    const int prompts = s ? static_cast<int>(s->analysis.keptPrompts.size()) : 0;
    const int keep = m_view->currentIndex();
    m_view->blockSignals(true);
    m_view->clear();
    m_view->addItem("mean over prompts");
    for (int k = 0; k < prompts; ++k) {
        QString text = QString::fromStdString(s->analysis.keptPrompts[static_cast<size_t>(k)]);
        m_view->addItem(QString("prompt %1: %2").arg(k + 1).arg(text.remove('\n')));
    }
    m_view->setCurrentIndex(keep >= 0 && keep < m_view->count() ? keep : 0);
    m_view->blockSignals(false);
}

int MainWindow::shownStep() const {
    const Snapshot* s = current();
    return s ? s->step : -1;
}

// Longer than 60 lines for a reason: every view of the shown step is filled here, in one place,
// so that none can show another step or model than the others.
void MainWindow::redraw() {
    ++m_redraws;
    m_sinceRedraw.start();
    showSubject();
    const CapturePoint point = m_form->capturePoint();
    const Snapshot* s = current();
    if (!s) {
        m_heatmaps->setHeatmaps({});
        m_attention->setHistory({}, -1);
        m_projector->setHistory({}, -1);
        m_curves->setHistory({}, {}, {}, point, -1);
        m_scores->setScores({}, point);
        m_probes->panel()->setReports(nullptr, nullptr, {});
        m_sliderText->setText("no snapshots yet");
        return;
    }
    const int prompt = m_view->currentIndex() - 1;  // -1: mean over prompts
    std::vector<ui::Heatmap> maps;
    for (const LayerScores& row : s->analysis.rows) {
        if (row.point != CapturePoint::Embedding && row.point != point) {
            continue;
        }
        ui::Heatmap h;
        h.title = heatmapTitle(row);
        h.size = s->analysis.seqLen;
        const bool kept = prompt >= 0 && prompt < static_cast<int>(row.promptMatrices.size());
        h.values = kept ? row.promptMatrices[static_cast<size_t>(prompt)] : row.meanMatrix;
        if (kept) {
            h.tokens = ui::promptTokens(s->analysis.keptPrompts[static_cast<size_t>(prompt)]);
        }
        maps.push_back(std::move(h));
    }
    m_heatmaps->setHeatmaps(std::move(maps));
    m_attention->setHistory(m_history.all(), m_slider->value());
    m_projector->setHistory(m_history.all(), m_slider->value());
    const bool stepKnown = !(m_subject.origin == SubjectOrigin::ModelFile && m_subject.step < 0);
    if (stepKnown) {
        m_curves->setHistory(m_history.all(), m_history.evaluations(), m_history.liveLosses(),
                             point, s->step);
    } else {
        m_curves->setHistory({}, {}, {}, point, -1);  // no place on an axis of steps
    }

    const bool modelFile = m_subject.origin == SubjectOrigin::ModelFile;
    const Snapshot* init = m_history.front().step == 0 && !modelFile ? &m_history.front() : nullptr;
    const Snapshot* best = m_history.best();
    int probeStep = -1;
    const ProbeReport* shownProbes =
        m_history.probesAt(static_cast<size_t>(m_slider->value()), &probeStep);
    const ProbeReport* startProbes = init ? m_history.initProbes() : nullptr;
    m_probes->panel()->setPoint(point);
    m_probes->panel()->setReports(
        startProbes, probeStep > 0 || modelFile ? shownProbes : nullptr,
        probeStep > 0 || modelFile ? stageLabel(m_subject, probeStep) : QString("current"));
    std::vector<ui::ScoreRow> rows;
    if (init) {
        rows.push_back({"init", &init->analysis, startProbes});
    }
    if (s != init) {
        rows.push_back({stageLabel(m_subject, s->step), &s->analysis,
                        probeStep == s->step ? shownProbes : nullptr});
    }
    if (best && best != s) {
        rows.push_back(
            {QString("best (step %1, %2%)").arg(best->step).arg(best->eval.accuracy, 0, 'f', 1),
             &best->analysis, best->probes.empty() ? nullptr : &best->probes});
    }
    m_scores->setScores(rows, point);
    m_sliderText->setText(stepKnown ? QString("step %1 (%2 of %3)")
                                          .arg(s->step)
                                          .arg(m_slider->value() + 1)
                                          .arg(m_history.size())
                                    : QString("model file, step unknown"));
}

}  // namespace nope::gui
