// PLACEHOLDER until the UI lands.
namespace envelope::ui {
int placeholder() { return 0; }
}
