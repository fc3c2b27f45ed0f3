#include "gui/user_guide.h"

#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QPushButton>
#include <QTextBrowser>
#include <QThread>
#include <QUrl>
#include <QVBoxLayout>

#include <torch/version.h>

#include <cstdlib>

#include "kernels/kernels.h"
#include "util/machine.h"

namespace nope::gui {

namespace {

// How autocast's bf16 matrix products run here (model/fast_ops.h decides the same way).
QString bf16Path() {
    const char* forced = std::getenv("NOPESCOPE_BF16_PRODUCTS");
    if (forced && *forced) {
        return QString("as NOPESCOPE_BF16_PRODUCTS=%1 asks (native or emulated; else by the CPU)")
            .arg(QString(forced).toHtmlEscaped());
    }
    if (kernels::cpuHasAvx512Bf16()) {
        return "in hardware (AVX-512 BF16)";
    }
    if (kernels::cpuHasBf16Products()) {
        return "in hardware (AMX-BF16)";
    }
    return "emulated with fp32 products (this CPU has neither AVX-512 BF16 nor AMX): fp32 "
           "training is at least as fast here";
}

}  // namespace

QString userGuideFolder() {
    const QDir bin(QCoreApplication::applicationDirPath());
    QStringList candidates = {bin.absoluteFilePath("../share/doc/nopescope")};
#ifdef NOPESCOPE_SOURCE_DIR
    candidates << QString(NOPESCOPE_SOURCE_DIR);
#endif
    for (const QString& folder : candidates) {
        if (QFileInfo::exists(folder + "/docs/window.md")) {
            return QDir(folder).canonicalPath();
        }
    }
    return {};
}

void showUserGuide(QWidget* parent, const QString& page) {
    const QString folder = userGuideFolder();
    if (folder.isEmpty()) {
        QMessageBox::information(
            parent, "NoPEScope user guide",
            QString("The user guide was not found: it is installed in %1 with the package, and "
                    "is the docs/ folder of the repository.")
                .arg(QDir(QCoreApplication::applicationDirPath())
                         .absoluteFilePath("../share/doc/nopescope")));
        return;
    }
    auto* dialog = new QDialog(parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setObjectName("userGuide");
    dialog->setWindowTitle("NoPEScope user guide");
    auto* browser = new QTextBrowser(dialog);
    browser->setObjectName("userGuideBrowser");
    browser->setOpenExternalLinks(true);  // http(s) links in the system's browser
    browser->setSearchPaths({folder, folder + "/docs"});
    auto* back = new QPushButton("Back", dialog);
    auto* contents = new QPushButton("Contents", dialog);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    QObject::connect(back, &QPushButton::clicked, browser, &QTextBrowser::backward);
    QObject::connect(browser, &QTextBrowser::backwardAvailable, back, &QPushButton::setEnabled);
    back->setEnabled(false);
    const QUrl home = QUrl::fromLocalFile(folder + "/README.md");
    QObject::connect(contents, &QPushButton::clicked, browser, [browser, home] {
        browser->setSource(home, QTextDocument::MarkdownResource);
    });
    QObject::connect(close, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    // Pages are Markdown; QTextBrowser reads a link's target by its suffix.
    QObject::connect(browser, &QTextBrowser::sourceChanged, dialog, [dialog, browser] {
        dialog->setWindowTitle("NoPEScope user guide: " + browser->source().fileName());
    });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(back);
    buttons->addWidget(contents);
    buttons->addStretch(1);
    buttons->addWidget(close);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(browser, 1);
    layout->addLayout(buttons);
    browser->setSource(QUrl::fromLocalFile(folder + "/" + page), QTextDocument::MarkdownResource);
    dialog->resize(900, 700);
    dialog->show();
}

QString aboutText() {
    return QString(
               "<p><b>NoPEScope %1</b></p>"
               "<p>Trains small causal transformers without positional encodings and shows "
               "how position information emerges in them.</p>"
               "<p>LibTorch %2.%3.%4, Qt %5 (built with %6)<br>"
               "CPU: %7, %8 threads<br>bf16 matrix products: %9</p>"
               "<p>The paper: Zuo, Guerzhoy, Guerzhoy, \"Position "
               "Information Emerges in Causal Transformers Without Positional Encodings via "
               "Similarity of Nearby Embeddings\", COLING 2025 "
               "(<a href=\"https://arxiv.org/abs/2501.00073\">arXiv:2501.00073</a>).</p>")
        .arg(NOPESCOPE_VERSION)
        .arg(TORCH_VERSION_MAJOR)
        .arg(TORCH_VERSION_MINOR)
        .arg(TORCH_VERSION_PATCH)
        .arg(qVersion())
        .arg(QT_VERSION_STR)
        .arg(QString::fromStdString(cpuModelName()).toHtmlEscaped())
        .arg(QThread::idealThreadCount())
        .arg(bf16Path());
}

}  // namespace nope::gui
