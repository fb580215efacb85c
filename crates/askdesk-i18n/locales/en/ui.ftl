# The page's words (ui/*.js and ui/index.html).
