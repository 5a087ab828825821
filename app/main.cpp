// PLACEHOLDER until the UI lands.
int main() { return 0; }
