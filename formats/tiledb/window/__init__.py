"""What the window shows of TileDB through the plugin API: chunk views, cell tables, the pipeline
lab, entries, the array summary."""
