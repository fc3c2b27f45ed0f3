#include "widgets/explore_tab.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "tasks/vocab.h"
#include "widgets/heatmap_grid.h"
#include "widgets/plot_style.h"
#include "widgets/qcp.h"
#include "widgets/theme_colors.h"

namespace nope::ui {

namespace {

constexpr int kMaxTried = 100;
constexpr const char* kTypeAPrompt = "Type a prompt above to see how the model's layers see it.";
constexpr const char* kNoModel =
    "There is no model yet: press Initialize or Train, or File > Open model.";

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString siteTitle(const LayerScores& row) {
    return row.point == CapturePoint::Embedding
               ? QString("embedding")
               : QString("%1 layer %2").arg(qs(toString(row.point))).arg(row.layer);
}

const std::vector<float>& matrixOf(const LayerScores& row) {
    return row.promptMatrices.empty() ? row.meanMatrix : row.promptMatrices.front();
}

bool shownSite(const LayerScores& row, CapturePoint point) {
    return row.point == CapturePoint::Embedding || row.point == point;
}

// One heatmap per shown site of one prompt's analysis, titled with its adjacency score.
std::vector<Heatmap> promptMaps(const Analysis& a, const std::string& prompt, CapturePoint point) {
    std::vector<Heatmap> maps;
    for (const auto& row : a.rows) {
        if (!shownSite(row, point)) {
            continue;
        }
        Heatmap h;
        h.title = QString("%1  %2").arg(siteTitle(row)).arg(row.adjacencyMean, 0, 'f', 3);
        h.size = a.seqLen;
        h.values = matrixOf(row);
        h.tokens = promptTokens(prompt);
        maps.push_back(std::move(h));
    }
    return maps;
}

// shown - pinned per site, titled with the change in adjacency score.
std::vector<Heatmap> differenceMaps(const Analysis& shown, const Analysis& pinned,
                                    const std::string& prompt, CapturePoint point) {
    std::vector<Heatmap> maps;
    for (const auto& row : shown.rows) {
        const LayerScores* other = pinned.find(row.point, row.layer);
        if (!shownSite(row, point) || !other) {
            continue;
        }
        Heatmap h;
        const QString site = row.point == CapturePoint::Embedding
                                 ? QString("embedding")
                                 : QString("%1 %2").arg(qs(toString(row.point))).arg(row.layer);
        h.title =
            site + QString::asprintf("  \u0394 %+.3f", row.adjacencyMean - other->adjacencyMean);
        h.size = shown.seqLen;
        const auto& a = matrixOf(row);
        const auto& b = matrixOf(*other);
        h.values.resize(a.size());
        for (size_t i = 0; i < a.size(); ++i) {
            h.values[i] = a[i] - b[i];
        }
        h.tokens = promptTokens(prompt);
        maps.push_back(std::move(h));
    }
    return maps;
}

}  // namespace

ExploreTab::ExploreTab(QWidget* parent)
    : QWidget(parent),
      m_prompt(new QLineEdit),
      m_problem(new QLabel),
      m_pin(new QPushButton("Pin")),
      m_point(new QComboBox),
      m_answer(new QLabel),
      m_timing(new QLabel),
      m_tried(new QListWidget) {
    m_prompt->setPlaceholderText("type any prompt, e.g. rev(1234)= or $123+456=");
    m_prompt->setToolTip(
        "Any string of printable ASCII: the model analyses it as you type. Enter keeps it in the "
        "list of prompts tried.");
    m_pin->setToolTip("pin this prompt, then edit it to see the change beside it; again to unpin");
    for (CapturePoint p : allCapturePoints()) {
        if (p != CapturePoint::Embedding) {
            m_point->addItem(qs(toString(p)), static_cast<int>(p));
        }
    }
    m_point->setCurrentIndex(m_point->findData(static_cast<int>(CapturePoint::Attn)));
    m_point->setToolTip("the capture point whose layers are shown beside the embedding");
    m_problem->setWordWrap(true);
    m_answer->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tried->setToolTip("prompts tried (Enter or Pin keeps one); click one to analyse it again");
    m_tried->setMaximumWidth(240);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel("prompt"));
    bar->addWidget(m_prompt, 1);
    bar->addWidget(m_pin);
    bar->addWidget(new QLabel("point"));
    bar->addWidget(m_point);

    auto* rows = new QSplitter(Qt::Vertical);
    const char* titles[3] = {"", "pinned", "difference: shown - pinned"};
    for (int r = 0; r < 3; ++r) {
        auto* box = new QWidget;
        auto* boxLayout = new QVBoxLayout(box);
        boxLayout->setContentsMargins(0, 0, 0, 0);
        m_rowTitles[r] = new QLabel(titles[r]);
        m_grids[r] = new HeatmapGrid;
        m_grids[r]->setScaleLabel(r == 2 ? "difference" : "cosine similarity");
        m_grids[r]->plot()->setMinimumHeight(140);  // three rows fit a window 700 pixels high
        boxLayout->addWidget(m_rowTitles[r]);
        boxLayout->addWidget(m_grids[r], 1);
        rows->addWidget(box);
        box->setVisible(r == 0);
    }
    auto* triedBox = new QWidget;
    auto* triedLayout = new QVBoxLayout(triedBox);
    triedLayout->setContentsMargins(0, 0, 0, 0);
    triedLayout->addWidget(new QLabel("prompts tried"));
    triedLayout->addWidget(m_tried, 1);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(rows);
    split->addWidget(triedBox);
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(m_problem);
    layout->addWidget(m_answer);
    layout->addWidget(m_timing);
    layout->addWidget(split, 1);

    connect(m_prompt, &QLineEdit::textChanged, this, &ExploreTab::onEdited);
    connect(m_prompt, &QLineEdit::returnPressed, this, [this] {
        if (problem().isEmpty() && !m_prompt->text().isEmpty()) {
            keepTried(m_prompt->text());
        }
    });
    connect(m_pin, &QPushButton::clicked, this, &ExploreTab::pin);
    connect(m_point, &QComboBox::currentIndexChanged, this, &ExploreTab::redraw);
    connect(m_tried, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { m_prompt->setText(item->text()); });
    m_whyNoModel = kNoModel;
    showMessage(kTypeAPrompt);
    changeEvent(nullptr);
}

CapturePoint ExploreTab::point() const {
    return static_cast<CapturePoint>(m_point->currentData().toInt());
}

void ExploreTab::setPoint(CapturePoint point) {
    const int index = m_point->findData(static_cast<int>(point));
    if (index >= 0) {
        m_point->setCurrentIndex(index);
    }
}

void ExploreTab::changeEvent(QEvent* event) {
    if (!event || event->type() == QEvent::PaletteChange) {
        QPalette p = m_problem->palette();
        p.setColor(QPalette::WindowText, themeColor(ThemeColor::Error, isDark(palette())));
        m_problem->setPalette(p);
    }
    if (event) {
        QWidget::changeEvent(event);
    }
}

QString ExploreTab::problem() const {
    const QString text = m_prompt->text();
    const std::string s = text.toStdString();
    if (const std::string outside = vocab::outsideMessage(s); !outside.empty()) {
        return qs(outside);
    }
    if (m_context > 0 && static_cast<int>(s.size()) > m_context) {
        return QString("%1 characters, longer than the model's context of %2 (allowed: 1 to %2)")
            .arg(s.size())
            .arg(m_context);
    }
    return {};
}

QString ExploreTab::answerText() const {
    return m_answer->text();
}

QString ExploreTab::timingText() const {
    return m_timing->text();
}

void ExploreTab::setContext(int tokens) {
    m_context = tokens;
    onEdited();
}

void ExploreTab::setModelAvailable(bool available, const QString& whyNot) {
    const QString why = whyNot.isEmpty() ? QString(kNoModel) : whyNot;
    if (available == m_modelAvailable && why == m_whyNoModel) {
        return;
    }
    m_modelAvailable = available;
    m_whyNoModel = why;
    if (!available) {
        m_inFlight = false;
        m_pending = false;
        forgetResult();
        return;
    }
    onEdited();
}

void ExploreTab::forgetResult() {
    m_result.reset();
    m_inFlight = false;
    m_pending = false;
    redraw();
    if (!m_modelAvailable) {
        showMessage(m_whyNoModel);
    } else if (m_prompt->text().isEmpty()) {
        showMessage(kTypeAPrompt);
    } else {
        showMessage("Asking the model...");
    }
}

void ExploreTab::refresh() {
    if (!m_prompt->text().isEmpty() && problem().isEmpty()) {
        request();
    }
}

void ExploreTab::retryIfWaiting() {
    if (m_retry) {
        m_retry = false;
        m_problem->setText(problem());
        refresh();
    }
}

void ExploreTab::onEdited() {
    m_sinceEdit.restart();
    const QString why = problem();
    m_problem->setText(why);
    if (m_prompt->text().isEmpty()) {
        m_result.reset();
        redraw();
        showMessage(kTypeAPrompt);
        return;
    }
    if (!why.isEmpty()) {
        return;  // the heatmaps of the last good prompt stay, the field says what is wrong
    }
    if (!m_modelAvailable) {
        showMessage(m_whyNoModel);
        return;
    }
    m_awaitingEdit = true;
    request();
}

void ExploreTab::request() {
    if (!m_modelAvailable || m_prompt->text().isEmpty() || !problem().isEmpty()) {
        m_pending = false;  // nothing to ask: an empty field, or one that says what is wrong
        return;
    }
    if (m_inFlight) {
        m_pending = true;  // asked again when the answer in flight returns
        return;
    }
    std::vector<std::string> prompts = {m_prompt->text().toStdString()};
    if (!m_pinned.isEmpty() && m_pinned != m_prompt->text()) {
        prompts.push_back(m_pinned.toStdString());
    }
    m_inFlight = true;
    Q_EMIT analysisRequested(prompts);
}

void ExploreTab::setResult(const PromptAnalysis& result) {
    m_inFlight = false;
    if (m_prompt->text().isEmpty()) {  // cleared while the answer was on its way
        m_pending = false;
        return;
    }
    m_result = result;
    redraw();
    for (HeatmapGrid* grid : m_grids) {
        if (grid->isVisible()) {
            grid->plot()->replot(QCustomPlot::rpImmediateRefresh);  // drawn before it is timed
        }
    }
    if (m_awaitingEdit && !result.prompts.empty() &&
        result.prompts.front() == m_prompt->text().toStdString()) {
        m_awaitingEdit = false;  // the answer to the last keystroke is on screen
        m_lastLatencyMs = static_cast<double>(m_sinceEdit.nsecsElapsed()) / 1e6;
    }
    m_timing->setText(QString("%1; analysed in %2 ms on the model's thread, %3 ms from the last "
                              "keystroke to this drawing")
                          .arg(result.step >= 0 ? QString("model at step %1").arg(result.step)
                                                : QString("model at an unknown step"))
                          .arg(result.seconds * 1e3, 0, 'f', 0)
                          .arg(m_lastLatencyMs, 0, 'f', 0));
    Q_EMIT resultShown();
    if (m_pending) {
        m_pending = false;
        request();
    }
}

void ExploreTab::setFailure(const QString& message, bool retry) {
    m_inFlight = false;
    m_problem->setText(message);
    m_retry = retry;
    if (m_pending && !retry) {
        m_pending = false;
        request();
    }
}

void ExploreTab::pin() {
    const QString text = m_prompt->text();
    if (!m_pinned.isEmpty() && (text == m_pinned || text.isEmpty())) {
        m_pinned.clear();  // unpin
    } else if (!text.isEmpty() && problem().isEmpty()) {
        m_pinned = text;
        keepTried(text);
    }
    m_pin->setText(m_pinned.isEmpty() ? "Pin" : "Unpin");
    m_rowTitles[1]->setText(m_pinned.isEmpty() ? QString() : "pinned: " + m_pinned);
    refresh();
    redraw();
}

void ExploreTab::keepTried(const QString& prompt) {
    for (int i = m_tried->count() - 1; i >= 0; --i) {
        if (m_tried->item(i)->text() == prompt) {
            delete m_tried->takeItem(i);
        }
    }
    m_tried->insertItem(0, prompt);
    while (m_tried->count() > kMaxTried) {
        delete m_tried->takeItem(m_tried->count() - 1);
    }
}

QStringList ExploreTab::triedPrompts() const {
    QStringList out;
    for (int i = 0; i < m_tried->count(); ++i) {
        out << m_tried->item(i)->text();
    }
    return out;
}

QString ExploreTab::setTriedPrompts(const QStringList& prompts) {
    m_tried->clear();
    QString first;
    for (int i = 0; i < prompts.size(); ++i) {
        const std::string outside = vocab::outsideMessage(prompts[i].toStdString());
        if (!outside.empty() || prompts[i].isEmpty()) {
            if (first.isEmpty()) {
                first =
                    QString("prompts[%1]: %2")
                        .arg(i)
                        .arg(prompts[i].isEmpty() ? QString("is empty (allowed: printable ASCII)")
                                                  : qs(outside));
            }
            continue;
        }
        if (m_tried->count() < kMaxTried) {
            m_tried->addItem(prompts[i]);
        }
    }
    return first;
}

void ExploreTab::showMessage(const QString& text) {
    m_answer->setText(text);
    m_timing->clear();
}

void ExploreTab::redraw() {
    const bool pinned = !m_pinned.isEmpty();
    for (int r = 1; r < 3; ++r) {
        m_grids[r]->parentWidget()->setVisible(pinned);
    }
    if (!m_result || m_result->analyses.empty()) {
        m_rowTitles[0]->clear();
        m_grids[0]->setEmptyText(
            m_modelAvailable ? QString("The heatmaps of the prompt typed above appear here.")
                             : m_whyNoModel);
        for (HeatmapGrid* grid : m_grids) {
            grid->setHeatmaps({});
        }
        return;
    }
    const PromptAnalysis& r = *m_result;
    const std::string& shownPrompt = r.prompts.front();
    auto shown = promptMaps(r.analyses.front(), shownPrompt, point());
    // alone, the prompt's heatmaps take the tab's shape; pinned, one row each, so that the
    // layers line up across the rows
    const int columns = pinned ? static_cast<int>(shown.size()) : 0;
    for (HeatmapGrid* grid : m_grids) {
        grid->setColumns(columns);
    }
    m_rowTitles[0]->setText("shown: " + qs(shownPrompt));
    m_grids[0]->setHeatmaps(std::move(shown));
    // the pinned prompt's analysis: the second, or the first when the two are the same
    const std::string pinnedText = m_pinned.toStdString();
    const Analysis* pinnedAnalysis = !pinned ? nullptr
                                     : r.analyses.size() > 1 && r.prompts[1] == pinnedText
                                         ? &r.analyses[1]
                                     : r.prompts[0] == pinnedText ? &r.analyses[0]
                                                                  : nullptr;
    if (pinnedAnalysis) {
        const Analysis& other = *pinnedAnalysis;
        m_grids[1]->setHeatmaps(promptMaps(other, pinnedText, point()));
        if (other.seqLen == r.analyses.front().seqLen) {
            m_rowTitles[2]->setText(
                "difference: shown - pinned (the change in adjacency score "
                "in each title)");
            m_grids[2]->setHeatmaps(
                differenceMaps(r.analyses.front(), other, shownPrompt, point()));
        } else {
            m_rowTitles[2]->setText(QString("no difference: the prompts have %1 and %2 "
                                            "characters (a difference needs equal lengths)")
                                        .arg(r.analyses.front().seqLen)
                                        .arg(other.seqLen));
            m_grids[2]->setHeatmaps({});
        }
    } else {
        m_grids[1]->setHeatmaps({});
        m_grids[2]->setHeatmaps({});
    }
    // the shown and the pinned prompt on one colour scale (the difference keeps its own)
    std::optional<std::pair<double, double>> both = m_grids[0]->valueRange();
    if (const auto other = m_grids[1]->valueRange(); both && other) {
        both = std::make_pair(std::min(both->first, other->first),
                              std::max(both->second, other->second));
    }
    for (int g = 0; g < 2; ++g) {
        m_grids[g]->setSharedRange(pinnedAnalysis ? both : std::nullopt);
    }
    const PromptAnswer& a = r.answers.front();
    // addition's answers are written reversed: say how they read too
    const auto written = [&](const std::string& s) {
        const std::string reads = readAnswer(r.task, s);
        return reads == s ? qs(s) : QString("%1 (reads %2)").arg(qs(s), qs(reads));
    };
    const QString verdict =
        a.expected.empty()
            ? QString("not a prompt of the %1 task: no expected answer").arg(qs(taskName(r.task)))
            : QString("expected %1: %2")
                  .arg(written(a.expected))
                  .arg(a.correct ? "correct" : "wrong");
    m_answer->setText(
        QString("the model's greedy answer: %1;  %2")
            .arg(a.answer.empty() ? QString("nothing before the terminator") : written(a.answer))
            .arg(verdict));
}

}  // namespace nope::ui
