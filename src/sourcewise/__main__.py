from sourcewise.doors.cli.main import main

main()
