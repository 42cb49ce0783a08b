from srcreview.cli import main

raise SystemExit(main())
