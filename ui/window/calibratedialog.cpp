#include "window/calibratedialog.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include "document/plandocument.h"

namespace envelope::ui {
namespace {

constexpr double kGiB = 1073741824.0;

// The dialog's fields, their labels and the ranges it accepts (the core refuses what it cannot
// reach within the plan's own ranges, and says so).
struct Field {
    const char* option; // the core's error path (the CLI option)
    const char* label;
    double min;
    double max;
};
constexpr Field kPeak { "--peak-gib", QT_TRANSLATE_NOOP("CalibrateDialog", "Peak memory (GiB)"),
    0.01, 1e5 };
constexpr Field kTokens { "--tokens-per-s",
    QT_TRANSLATE_NOOP("CalibrateDialog", "Throughput (tokens/s)"), 0.001, 1e15 };
constexpr Field kStep { "--step-time-s", QT_TRANSLATE_NOOP("CalibrateDialog", "Step time (s)"),
    0.001, 1e7 };

QString trText(const char* text)
{
    return QCoreApplication::translate("CalibrateDialog", text);
}

// Empty text: not given. Otherwise a number within the field's range, or an error naming both.
std::optional<double> parse(const QLineEdit* edit, const Field& field, QString& error)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return std::nullopt;
    bool ok = false;
    const double value = QLocale().toDouble(text, &ok);
    const double v = ok ? value : text.toDouble(&ok); // "61.5" whatever the locale
    if (!ok || !(v >= field.min && v <= field.max)) {
        error = trText("%1: must be a number in %2..%3, got \"%4\"")
                    .arg(trText(field.label), QString::number(field.min),
                        QString::number(field.max), text);
        return std::nullopt;
    }
    return v;
}

QString fieldLabel(const std::string& option)
{
    for (const Field& f : { kPeak, kTokens, kStep })
        if (option == f.option)
            return trText(f.label);
    if (option == "--metric")
        return trText("Metric");
    return QString::fromStdString(option);
}

// One change as the core reports it: the plan field before → after, and the figure it fits.
QString changeText(const CalibrationChange& c)
{
    const bool bytes = c.measure != "training.tokens_per_s";
    const auto figure = [&](double v) {
        return bytes ? QStringLiteral("%1 GiB").arg(v / kGiB, 0, 'f', 2)
                     : QStringLiteral("%1 tokens/s").arg(v, 0, 'f', 0);
    };
    const QString percent = c.before != 0
        ? QStringLiteral(" (%1%2%)")
              .arg(c.after >= c.before ? QStringLiteral("+") : QString())
              .arg(100.0 * (c.after / c.before - 1), 0, 'f', 1)
        : QString();
    return trText("<b>%1</b>: %2 → %3%4<br>&nbsp;&nbsp;%5: %6 → %7 (measured %8)")
        .arg(QString::fromStdString(c.field), QString::number(c.before, 'g', 4),
            QString::number(c.after, 'g', 4), percent, QString::fromStdString(c.measure),
            figure(c.estimateBefore), figure(c.estimateAfter), figure(c.measured));
}

} // namespace

CalibrateDialog::CalibrateDialog(PlanDocument* document, QWidget* parent)
    : QDialog(parent)
    , m_document(document)
    , m_peak(new QLineEdit(this))
    , m_metric(new QComboBox(this))
    , m_rateKind(new QComboBox(this))
    , m_rate(new QLineEdit(this))
    , m_preview(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Calibrate from a measured run"));
    m_peak->setObjectName(QStringLiteral("peak"));
    m_peak->setPlaceholderText(tr("per GPU, e.g. 61.5 (empty: keep memory as is)"));
    m_metric->setObjectName(QStringLiteral("metric"));
    m_metric->addItem(tr("reserved (torch.cuda.max_memory_reserved)"), QStringLiteral("reserved"));
    m_metric->addItem(
        tr("allocated (torch.cuda.max_memory_allocated)"), QStringLiteral("allocated"));
    m_metric->addItem(tr("device (nvidia-smi)"), QStringLiteral("device"));
    m_rateKind->setObjectName(QStringLiteral("rateKind"));
    m_rateKind->addItem(tr("tokens/s, whole job"), QStringLiteral("tokens"));
    m_rateKind->addItem(tr("step time, s"), QStringLiteral("step"));
    m_rate->setObjectName(QStringLiteral("rate"));
    m_rate->setPlaceholderText(tr("optional: fits the MFU"));
    m_preview->setObjectName(QStringLiteral("preview"));
    m_preview->setWordWrap(true);
    m_preview->setTextFormat(Qt::RichText);
    m_preview->setMinimumWidth(600);
    // Room for both changes (four lines, some wrapped) and an error, so the dialog does not jump.
    m_preview->setMinimumHeight(m_preview->fontMetrics().lineSpacing() * 8);
    m_preview->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    auto* form = new QFormLayout(this);
    form->addRow(tr("&Peak memory (GiB):"), m_peak);
    form->addRow(tr("&Metric:"), m_metric);
    form->addRow(tr("&Throughput as:"), m_rateKind);
    form->addRow(tr("Measured &value:"), m_rate);
    form->addRow(m_preview);
    form->addRow(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &CalibrateDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_peak, &QLineEdit::textChanged, this, &CalibrateDialog::update);
    connect(m_rate, &QLineEdit::textChanged, this, &CalibrateDialog::update);
    connect(m_metric, &QComboBox::currentIndexChanged, this, &CalibrateDialog::update);
    connect(m_rateKind, &QComboBox::currentIndexChanged, this, &CalibrateDialog::update);
    update();
}

std::optional<CalibrationTarget> CalibrateDialog::target()
{
    CalibrationTarget t;
    QString error;
    const std::optional<double> peak = parse(m_peak, kPeak, error);
    const bool tokens = m_rateKind->currentData().toString() == QLatin1String("tokens");
    const std::optional<double> rate = parse(m_rate, tokens ? kTokens : kStep, error);
    if (!error.isEmpty()) {
        m_message = error;
        return std::nullopt;
    }
    if (!peak && !rate) {
        m_message = tr("Enter the measured peak memory and/or the throughput.");
        return std::nullopt;
    }
    if (peak)
        t.peakBytes = *peak * kGiB;
    parseMemoryMetric(m_metric->currentData().toString().toStdString(), t.metric);
    if (rate)
        (tokens ? t.tokensPerS : t.stepTimeS) = *rate;
    return t;
}

void CalibrateDialog::update()
{
    m_calibration.reset();
    m_message.clear();
    if (!m_document->isValid())
        m_message
            = tr("The plan has an error to fix first: %1").arg(m_document->validationMessage());
    else if (const std::optional<CalibrationTarget> t = target()) {
        Expected<Calibration> fitted = calibrate(m_document->plan(), *t);
        if (fitted)
            m_calibration = std::move(*fitted);
        else
            m_message = QStringLiteral("%1: %2").arg(
                fieldLabel(fitted.error().path), QString::fromStdString(fitted.error().message));
    }
    QStringList lines;
    if (m_calibration)
        for (const CalibrationChange& c : m_calibration->changes)
            lines << changeText(c);
    m_preview->setText(m_calibration
            ? tr("OK will change:<br>%1").arg(lines.join(QStringLiteral("<br>")))
            : QStringLiteral("<span style=\"color:#b00020\">%1</span>")
                  .arg(m_message.toHtmlEscaped()));
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(m_calibration.has_value());
}

void CalibrateDialog::accept()
{
    if (!m_calibration)
        return;
    m_document->edit(m_calibration->plan, tr("Calibrate from a measured run"));
    QDialog::accept();
}

} // namespace envelope::ui
