from kafkaops.cli.launcher import main

main()
