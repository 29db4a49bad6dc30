    .text
    .globl main
    .type main, @function
main:
    xor %eax, %eax
    ret
    .size main, .-main
    .globl at_the_top
    .type at_the_top, @function
    .set at_the_top, 0xffffffffffffff00
    .size at_the_top, 0x1000
