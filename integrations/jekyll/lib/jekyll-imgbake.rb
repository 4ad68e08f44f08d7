# What `plugins: [jekyll-imgbake]` in _config.yml requires.
require_relative "jekyll/imgbake"
