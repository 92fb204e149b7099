# Presets and other files shipped alongside the program.
