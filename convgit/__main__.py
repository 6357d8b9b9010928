from convgit.cli import main

main()
