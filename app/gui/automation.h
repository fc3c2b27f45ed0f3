// Scripted runs of the window, for the docs' screenshots and measurements:
//   --screenshots DIR   Initialize, save DIR/window-init.png; train the quick preset for
//                       --steps N (default 600), save DIR/window-trained.png,
//                       window-attention.png, window-projector.png, window-explore.png (a
//                       pinned prompt and one digit changed) and window-probes.png; quit.
//   --measure           train the quick preset for --steps N and print the longest event-loop
//                       stall, the redraw rate and the throughput in the window; then type a
//                       prompt into the Explore tab a character at a time and print the
//                       keystroke-to-drawing times; quit.
//   --task T            the task for both (default addition).
//   --snapshot-every N  snapshot interval of those runs (default steps / 12).
//   --batch N, --layers N  batch size and depth instead of the quick preset's.
//   --theme NAME        system, light or dark (also without the options above).
//   --compare ROOT      open the Compare tab on the runs under ROOT, every run ticked; with
//                       --screenshots DIR, save DIR/window-compare.png, the accuracy curves
//                       over wall time as DIR/compared-accuracy-minutes.png (1000 x 450) and
//                       DIR/window-side-by-side.png and quit instead of training.
//   --sweep DIR         open the Sweep tab on the sweep folder DIR; with --screenshots DIR2,
//                       save DIR2/window-sweep.png (heatmap) and window-sweep-lines.png, quit.
//   --mechanism         open the Mechanism tab; with --screenshots DIR, save
//                       DIR/window-mechanism.png, run the ablations of the form's model at
//                       init, save DIR/window-ablations.png (v_out's heatmaps) and quit.
//   --report DIR        render the figures of `nopescope-cli reproduce`'s study in DIR into
//                       DIR/figures (PNG and SVG) without showing the window, and quit.
//   --open DIR          open the run folder DIR and follow it: the snapshots its run writes
//                       later appear as they come (a run in another process, or on a cluster).
//   --close-after S     start training the quick preset, close the window after S seconds and
//                       print the time of the close request (epoch ms) to time the exit.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QStringList>
#include <QTimer>

namespace nope::gui {

class MainWindow;

class Automation : public QObject {
    Q_OBJECT

public:
    explicit Automation(MainWindow& window);
    // Reads the options (with the CLI's flag parser); false after printing why on bad ones, or
    // after printing the help for --help (then helpShown()).
    bool configure(const QStringList& arguments);
    bool helpShown() const { return m_helpShown; }
    QString reportFolder() const { return m_report; }  // --report DIR, empty when not given
    void start();
    // Whether the options drive the window (screenshots, measurements, a timed close); without
    // them the window starts as a user's does.
    bool drivesTheWindow() const {
        return !m_screenshots.isEmpty() || m_measure || m_closeAfter > 0 || !m_open.isEmpty();
    }

private:
    void startMeasuring();
    void screenshot(const QString& name);
    void onSnapshot();
    void onReady();
    void finish();
    void explorePinnedAndEdited();
    void measureExplore();
    void showComparison();
    void showSweep();
    void showMechanism();

    MainWindow& m_window;
    QString m_screenshots;
    bool m_measure = false;
    int m_steps = 600;
    int m_snapshotEvery = 0;
    int m_batch = 0;
    int m_layers = 0;
    QString m_task = "addition";
    QString m_theme;
    QString m_compare;
    QString m_open;
    QString m_sweep;
    QString m_report;
    bool m_mechanism = false;
    double m_closeAfter = 0.0;
    bool m_initShot = false;
    bool m_helpShown = false;
    QTimer m_probe;
    QElapsedTimer m_clock;
    qint64 m_lastTick = 0;
    qint64 m_longestStall = 0;
    qint64 m_trainStart = 0;
    int m_redrawsAtStart = 0;
    std::vector<double> m_tokensPerSecond;
};

}  // namespace nope::gui
