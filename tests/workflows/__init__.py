"""The documented workflows as tests: the command blocks of README.md and docs/*.md (`blocks`),
the substitutions that make them run in a test (`substitutions`), which test runs which command
(`registry`), and a shell that runs them as a user would (`shell`)."""
