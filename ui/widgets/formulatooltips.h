// Tooltips that show a figure's formula, fetched only when the tooltip is about to show: the
// explanations cost a second estimate, so live redraws never ask for them.
#pragma once

#include <QHash>
#include <QObject>
#include <QString>

#include <functional>

class QWidget;

namespace envelope::ui {

class FormulaToolTips : public QObject {
    Q_OBJECT
public:
    // Returns the tooltip text of a figure key ("training.step_time_s"); empty for none.
    using Provider = std::function<QString(const QString& figure)>;

    explicit FormulaToolTips(QObject* parent = nullptr);

    void setProvider(Provider provider) { m_provider = std::move(provider); }
    // `widget` shows the formula of `figure` on hover, after its own tooltip text (if any).
    void attach(QWidget* widget, const QString& figure);
    // The text `widget` would show now.
    QString toolTipFor(QWidget* widget) const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    Provider m_provider;
    QHash<QObject*, QString> m_figures;
};

} // namespace envelope::ui
