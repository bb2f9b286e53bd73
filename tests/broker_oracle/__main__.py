from .record import main

main()
