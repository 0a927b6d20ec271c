// Tabs: show the chosen panel.
for (const tab of document.querySelectorAll('[data-panel]')) {
  tab.addEventListener('click', () => {
    for (const other of document.querySelectorAll('[data-panel]')) other.classList.remove('active');
    tab.classList.add('active');
    document.getElementById(tab.dataset.panel).hidden = false;
  });
}
