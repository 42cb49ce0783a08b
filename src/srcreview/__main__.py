from srcreview.cli.main import main

raise SystemExit(main())
