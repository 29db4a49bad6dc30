#include <stdio.h>

int divide(int a, int b) {
    int q = a / b;
    return q;
}

int main(int argc, char **argv) {
    printf("%d\n", divide(10, argc - 1));
    return 0;
}