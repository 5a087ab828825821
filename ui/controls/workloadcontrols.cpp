#include "controls/workloadcontrols.h"
#include "controls/showvalue.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <cmath>

#include "controls/choicecombo.h"
#include "controls/sliderspin.h"
#include "document/plandocument.h"
#include "plan/lengths.h"

namespace envelope::ui {
namespace {

LengthDistribution meanP90(double mean, double p90)
{
    LengthDistribution d;
    d.form = LengthDistribution::Form::MeanP90;
    d.mean = mean;
    d.p90 = std::clamp(p90, mean, std::floor(kMaxLogNormalP90OverMean * mean));
    return d;
}

// The mean and p90 a length shows: a count is both.
std::pair<double, double> shownLength(const LengthDistribution& d)
{
    if (d.form == LengthDistribution::Form::Fixed)
        return { d.fixed, d.fixed };
    return { d.mean, d.p90 };
}

} // namespace

ServingWorkload WorkloadControls::defaultWorkload(int context)
{
    ServingWorkload w;
    const double output = std::clamp(std::floor(context * 0.05), 1.0, 300.0);
    const double input = std::clamp(std::floor(context * 0.2), 1.0, 1000.0);
    w.input = meanP90(input, 1.8 * input);
    w.output = meanP90(output, 1.8 * output);
    w.requestRate = 1.0;
    return w;
}

WorkloadControls::WorkloadControls(PlanDocument* document, QWidget* parent)
    : PlanControlGroup(tr("Requests and SLO"), document, parent)
    , m_arrival(new ChoiceCombo(this))
    , m_rate(new SliderSpin(SliderSpin::Scale::Log, 0.01, 10000, 2))
    , m_users(new QSpinBox(this))
    , m_lengthNote(new QLabel(this))
{
    m_enabled = addSwitch(tr("Serve a &workload"),
        tr("Simulate the engine serving requests of varying lengths at a rate, with TTFT and "
           "TPOT percentiles (serving.workload)"),
        [](Plan& p, bool on) {
            if (on) {
                p.serving.workload = defaultWorkload(p.serving.context);
            } else {
                p.serving.workload.reset();
                p.serving.slo.reset();
            }
        },
        tr("Workload"));

    m_arrival->addItem(tr("Rate (Poisson)"), 0);
    m_arrival->addItem(tr("Users (closed loop)"), 1);
    m_arrival->setToolTip(tr("Open loop: requests arrive at random at a rate. Closed loop: each "
                             "user sends the next request when the last one finishes."));
    form()->addRow(tr("&Arrivals:"), m_arrival);
    connect(m_arrival, &QComboBox::activated, this, [this](int index) {
        const bool users = m_arrival->itemData(index).toInt() == 1;
        edit(users ? tr("Workload: users") : tr("Workload: request rate"), [users](Plan& p) {
            if (!p.serving.workload)
                return;
            ServingWorkload& w = *p.serving.workload;
            if (users && !w.concurrency) {
                w.requestRate.reset();
                w.concurrency = std::max(1, p.serving.concurrency);
            } else if (!users && !w.requestRate) {
                w.concurrency.reset();
                w.requestRate = 1.0;
            }
        });
    });

    m_rate->setSuffix(tr(" req/s"));
    m_rate->setToolTip(tr("Requests per second for the whole deployment (cluster GPUs / serving "
                          "TP engines share them)"));
    form()->addRow(tr("&Rate:"), m_rate);
    connect(m_rate, &SliderSpin::valueEdited, this, [this](double v) {
        const double rate = std::max(0.01, v);
        edit(
            tr("Request rate %1").arg(rate, 0, 'g', 3),
            [rate](Plan& p) {
                if (p.serving.workload && p.serving.workload->requestRate)
                    p.serving.workload->requestRate = rate;
            },
            kWorkloadRateControl);
    });

    m_users->setRange(1, 1'000'000);
    m_users->setKeyboardTracking(false);
    m_users->setToolTip(tr("Users of the whole deployment, each with one request in flight"));
    form()->addRow(tr("&Users:"), m_users);
    connect(m_users, &QSpinBox::valueChanged, this, [this](int v) {
        edit(
            tr("Users %1").arg(v),
            [v](Plan& p) {
                if (p.serving.workload && p.serving.workload->concurrency)
                    p.serving.workload->concurrency = v;
            },
            kWorkloadUsersControl);
    });

    m_inMean = lengthSpin(tr("Prompt &mean:"), tr("Mean prompt length in tokens"),
        kWorkloadInputMeanControl, true, false);
    m_inP90 = lengthSpin(tr("Prompt p&90:"),
        tr("90th percentile of the prompt length (a log-normal: at most 2.27x the mean)"),
        kWorkloadInputP90Control, true, true);
    m_outMean = lengthSpin(tr("Output m&ean:"), tr("Mean generated tokens per request"),
        kWorkloadOutputMeanControl, false, false);
    m_outP90 = lengthSpin(tr("Output p9&0:"),
        tr("90th percentile of the generated tokens (a log-normal: at most 2.27x the mean)"),
        kWorkloadOutputP90Control, false, true);
    m_lengthNote->setWordWrap(true);
    form()->addRow(m_lengthNote);

    m_ttft = limitSpin(tr("TTFT p90 ≤:"),
        tr("Latency objective: 90% of requests see their first token within this (0: none)"),
        kSloTtftControl, true);
    m_tpot = limitSpin(tr("TPOT p90 ≤:"),
        tr("Latency objective: 90% of requests generate at this time per token or faster (0: none)"),
        kSloTpotControl, false);
    refresh();
}

QSpinBox* WorkloadControls::lengthSpin(
    const QString& label, const QString& tip, int mergeId, bool input, bool p90)
{
    auto* spin = new QSpinBox(this);
    spin->setRange(1, 100'000'000);
    spin->setKeyboardTracking(false);
    spin->setSuffix(tr(" tok"));
    spin->setToolTip(tip);
    form()->addRow(label, spin);
    const QString name = undoName(label);
    connect(spin, &QSpinBox::valueChanged, this, [this, name, mergeId, input, p90](int v) {
        edit(
            tr("%1 %2").arg(name).arg(v),
            [input, p90, v](Plan& p) {
                if (!p.serving.workload)
                    return;
                LengthDistribution& d = input ? p.serving.workload->input : p.serving.workload->output;
                if (d.form == LengthDistribution::Form::Histogram)
                    return;
                auto [mean, high] = shownLength(d);
                if (p90)
                    high = v;
                else
                    mean = v;
                // A mean above the p90 pulls the p90 up; a p90 past the log-normal's widest
                // comes back to it (meanP90 clamps).
                d = meanP90(mean, std::max(high, mean));
            },
            mergeId);
    });
    return spin;
}

QDoubleSpinBox* WorkloadControls::limitSpin(
    const QString& label, const QString& tip, int mergeId, bool ttft)
{
    auto* spin = new QDoubleSpinBox(this);
    spin->setRange(0, 1e6);
    spin->setDecimals(1);
    spin->setSuffix(tr(" ms"));
    spin->setSpecialValueText(tr("none"));
    spin->setKeyboardTracking(false);
    spin->setToolTip(tip);
    form()->addRow(label, spin);
    const QString name = undoName(label);
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, name, mergeId, ttft](double ms) {
        edit(
            ms > 0 ? tr("%1 %2 ms").arg(name).arg(ms) : tr("%1 none").arg(name),
            [ttft, ms](Plan& p) {
                if (!p.serving.workload)
                    return;
                ServingSlo slo = p.serving.slo.value_or(ServingSlo {});
                std::optional<double>& limit = ttft ? slo.ttftP90S : slo.tpotP90S;
                limit = ms > 0 ? std::optional<double>(ms / 1000.0) : std::nullopt;
                if (slo.any())
                    p.serving.slo = slo;
                else
                    p.serving.slo.reset();
            },
            mergeId);
    });
    return spin;
}

void WorkloadControls::refresh()
{
    const ServingConfig& s = document()->plan().serving;
    const QSignalBlocker b0(m_enabled), b1(m_arrival), b2(m_users), b3(m_inMean), b4(m_inP90),
        b5(m_outMean), b6(m_outP90), b7(m_ttft), b8(m_tpot);
    const bool on = s.workload.has_value();
    m_enabled->setChecked(on);
    // Off, only the switch and what it means: no stale values in greyed boxes.
    for (QWidget* w : std::initializer_list<QWidget*> { m_arrival, m_rate, m_users, m_inMean,
             m_inP90, m_outMean, m_outP90, m_ttft, m_tpot })
        form()->setRowVisible(w, on);
    if (!on) {
        m_lengthNote->setText(tr("Off: the Serving figures are one static batch of Concurrency "
                                 "sequences of Context tokens."));
        return;
    }
    const bool rate = !s.workload->concurrency.has_value();
    form()->setRowVisible(m_rate, rate);
    form()->setRowVisible(m_users, !rate);
    const ServingWorkload& w = *s.workload;
    m_arrival->setCurrentIndex(m_arrival->findData(w.concurrency ? 1 : 0));
    m_rate->setValue(w.requestRate.value_or(1.0));
    showValue(m_users, w.concurrency.value_or(1));
    QStringList histograms;
    const auto showLength = [&](const LengthDistribution& d, QSpinBox* mean, QSpinBox* p90,
                                const QString& what) {
        const bool histogram = d.form == LengthDistribution::Form::Histogram;
        mean->setEnabled(!histogram);
        p90->setEnabled(!histogram);
        if (histogram) {
            histograms << tr("%1 lengths come from a histogram of %n bins in the plan file", "",
                              int(d.histogram.size()))
                              .arg(what);
            return;
        }
        const auto [m, h] = shownLength(d);
        showValue(mean, int(std::lround(m)));
        showValue(p90, int(std::lround(h)));
    };
    showLength(w.input, m_inMean, m_inP90, tr("Prompt"));
    showLength(w.output, m_outMean, m_outP90, tr("Output"));
    m_lengthNote->setText(histograms.isEmpty()
            ? tr("Lengths are log-normal with that mean and p90, cut at the context.")
            : histograms.join(QStringLiteral("; ")) + QLatin1Char('.'));
    const ServingSlo slo = s.slo.value_or(ServingSlo {});
    showValue(m_ttft, slo.ttftP90S ? *slo.ttftP90S * 1000 : 0);
    showValue(m_tpot, slo.tpotP90S ? *slo.tpotP90S * 1000 : 0);
}

} // namespace envelope::ui
