// PLACEHOLDER until its owner lands the real CLI.
int main() { return 1; }
