# The Jekyll plugin: `gem build jekyll-imgbake.gemspec`, then `gem install jekyll-imgbake-*.gem`, then
# `plugins: [jekyll-imgbake]` in _config.yml. The imgbake binary itself is installed apart.
Gem::Specification.new do |spec|
  spec.name = "jekyll-imgbake"
  spec.version = "0.2.0"
  spec.summary = "imgbake inside Jekyll: every image of the built site localised and responsive, in builds and jekyll serve"
  spec.authors = ["the imgbake authors"]
  spec.license = "MIT"
  spec.homepage = "https://github.com/imgbake/imgbake"
  spec.files = ["lib/jekyll-imgbake.rb", "lib/jekyll/imgbake.rb", "README.md"]
  spec.required_ruby_version = ">= 2.7"
  # No dependency on the jekyll gem: the plugin runs inside whichever Jekyll loads it, and Debian's
  # jekyll is not a gem rubygems can resolve against (a dependency would make `gem install` fetch a
  # second Jekyll). Supported: Jekyll 4.3 (Debian 12's, which the tests run) and later 4.x; the hook
  # priorities it needs came with 3.8.
  spec.metadata = { "jekyll_versions" => ">= 4.3, < 5" }
end
