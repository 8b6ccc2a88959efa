from ._entry import console

console()
