"""Reports of one run (SPEC §11): a record built from the run's episodes and metrics
(build.py), rendered as JSON, as Markdown sized for a pull-request comment (markdown.py)
and as one self-contained HTML page (html.py, charts as inline SVG in svg.py). Pure."""
