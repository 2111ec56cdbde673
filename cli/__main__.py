from kafkaops.cli.app import main

main()
