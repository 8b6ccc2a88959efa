from fixer.cli.entry import console

console()
