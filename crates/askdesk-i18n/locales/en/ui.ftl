# The page's words (ui/*.js and ui/index.html).

# This language's name in its own words, in the language choice.
language-name = English
