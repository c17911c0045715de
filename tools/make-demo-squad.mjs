#!/usr/bin/env node
// Regenerates the small SQuAD v1.1 question-answering set that `span demo` fine-tunes and evaluates on:
//   fixtures/squad-demo/train.json   about 150 questions
//   fixtures/squad-demo/dev.json     about 40 questions, on paragraphs disjoint from train's
// Every context is a paragraph of 3-6 consecutive sentences (lines) of one address of
// fixtures/corpus.txt, joined with single spaces, titled by the address ("1823 James Monroe").
// The questions and answers below were written by hand for this project, over its own fixture corpus
// (State of the Union addresses, public domain); each answer is an extractive span of its paragraph.
// A paragraph is named by an anchor, a string that starts exactly one line of the corpus, and a
// sentence count; answer_start is computed here by finding the answer in the context (in code points,
// as Python counts), and the script fails loudly when an answer is absent, or occurs more than once
// and no occurrence index (0-based) is given.
// Usage: node tools/make-demo-squad.mjs   (after fixtures/corpus.txt changes; needs nothing else)
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// The addresses of corpus.txt in order (ADDRESSES in tools/make-fixtures.mjs), as titles.
const TITLES = [
  '1790 George Washington', '1801 Thomas Jefferson', '1823 James Monroe', '1862 Abraham Lincoln',
  '1901 Theodore Roosevelt', '1913 Woodrow Wilson', '1934 Franklin D. Roosevelt', '1962 John F. Kennedy',
  '1985 Ronald Reagan', '2000 William J. Clinton', '2016 Barack Obama',
]

/** [split, anchor (start of the paragraph's first line), sentences, [[question, answer, occurrence?], ...]] */
const PARAGRAPHS = [
  // ---- 1790 George Washington
  ['train', 'Fellow-Citizens of the Senate and House of Representatives: In meeting you again', 5, [
    ['What has blessed the country with plenty and with the means of a flourishing commerce?', 'The abundant fruits of another year'],
    ['Besides at home, where has American stock risen considerably?', 'abroad'],
  ]],
  ['train', 'In conformity to the powers vested in me by acts of the last session', 5, [
    ['How large was the loan completed in Holland?', '3,000,000 florins'],
    ['Where was the loan of 3,000,000 florins completed?', 'Holland'],
    ['Which district concurred in propositions to become a distinct member of the Union?', 'Kentucky'],
    ['Of which State was Kentucky then a part?', 'Virginia'],
  ]],
  ['train', 'The liberality and harmony with which it has been conducted', 4, [
    ['What had been made on the frontier settlements by banditti of Indians?', 'frequent incursions'],
    ['From which side of the Ohio did the banditti of Indians come?', 'the northwest side'],
    ['Near which river did some of the tribes active in depredations dwell?', 'the Wabash'],
  ]],
  ['dev', 'As this object could not be effected by defensive measures', 5, [
    ['Who is directed to lay before Congress a statement of the information on which the expedition is founded?', 'The Secretary of War'],
    ['What were combined with drafts of militia in the expedition?', 'the regular troops in that quarter'],
  ]],
  ['train', 'Our fisheries and the transportation of our own produce', 5, [
    ['What offer abundant means for guarding against this evil?', 'Our fisheries and the transportation of our own produce'],
    ['To which sea does the distressed branch of trade belong?', 'the Mediterranean'],
    ['What have the laws establishing a judiciary system opened to all descriptions of persons?', 'the doors of justice'],
    ['Sentences from which courts might need a uniform process of execution?', 'the Federal courts'],
  ]],
  ['train', 'The patronage of our commerce, of our merchants and sea men', 5, [
    ['What appointment has the patronage of commerce called for?', 'consuls in foreign countries'],
    ['With whom was the consular convention made?', 'His Most Christian Majesty'],
    ['Besides the militia and a mint, what standards does Washington expect Congress to establish?', 'standards of weights and measures'],
  ]],
  ['dev', 'Allow me, moreover, to hope that it will be a favorite policy with you', 5, [
    ['Besides the interest of the funded debt, what does Washington hope to pay off?', 'the principal itself'],
    ['The appropriation of which land shows the dispositions of Congress on the debt?', 'the Western land'],
  ]],
  // ---- 1801 Thomas Jefferson
  ['train', 'Fellow Citizens of the Senate and House of Representatives: It is a circumstance of sincere gratification', 5, [
    ['What practices were introduced among the Indian neighbors besides their implements?', 'husbandry and the household arts'],
    ['Which precarious resources were the Indians coming to depend on less?', 'hunting and fishing'],
    ['What do some of the Indian tribes begin to experience?', 'an increase of population'],
  ]],
  ['train', 'The arrival of our squadron dispelled the danger.', 5, [
    ['What dispelled the danger?', 'The arrival of our squadron'],
    ['What was the name of the schooner that was engaged by a Tripolitan cruiser?', 'Enterprise'],
    ['Who commanded the schooner Enterprise?', 'Lieutenant Sterret'],
  ]],
  ['train', 'These views, however, of reducing our burthens are formed', 5, [
    ['Which parts of the Government will need revisal?', 'the civil Government, the Army, and Navy'],
    ['What do the States themselves have principal care of?', 'our persons, our property, and our reputation'],
  ]],
  ['dev', 'An account of the receipts and expenditures of the last year', 5, [
    ['Who prepared the account of the receipts and expenditures of the last year?', 'the Secretary of the Treasury'],
    ['What have the late sales of the public lands shown they may become?', 'an important source of receipt'],
  ]],
  ['train', 'With respect to the extent to which our naval preparations', 5, [
    ['Where will a small force probably continue to be wanted for actual service?', 'the Mediterranean'],
    ['For what kind of ships were materials being provided?', '74-gun ships'],
  ]],
  ['train', 'A statement of those commenced or projected, of the expenses already incurred', 4, [
    ['What are the four pillars of our prosperity?', 'Agriculture, manufactures, commerce, and navigation'],
    ['When are the four pillars of prosperity most thriving?', 'when left most free to individual enterprise'],
  ]],
  ['dev', 'Some others of less moment or not yet ready for communication', 5, [
    ['To what does Jefferson commit the arduous affairs of the Government?', 'the collected wisdom of the Union'],
    ['To what should expenses be reduced?', 'what is necessary for the useful purposes of Government'],
  ]],
  // ---- 1823 James Monroe
  ['train', 'Fellow-Citizens of the Senate and House of Representatives: Many important subjects', 6, [
    ['With what feeling does Monroe undertake this duty?', 'diffidence'],
    ['Who are exclusively the sovereign?', 'The people'],
  ]],
  ['train', 'Since the close of the last session of Congress the commissioners and arbitrators', 5, [
    ['Where was the convention of July 12th, 1822 concluded?', 'St. Petersburg'],
    ['When was the treaty between the United States and Spain made?', 'February 22nd, 1819'],
    ['Under which article of the treaty with Spain was the commission constituted?', 'the 11th article'],
    ['Which trade did the ministers propose to class as piracy?', 'the African slave trade'],
  ]],
  ['dev', 'The Military Academy has attained a degree of perfection', 5, [
    ['Which institution has attained a degree of perfection in its discipline and instruction?', 'The Military Academy'],
    ['Which department\'s appropriated money was applied regularly and economically?', 'the Ordnance Department'],
  ]],
  ['train', 'Commodore Rodgers, with a promptitude which did him honor', 5, [
    ['Who cheerfully accepted the trust with promptitude?', 'Commodore Rodgers'],
    ['Who had removed from the island with the greater part of the squadron?', 'Commodore Porter'],
    ['Why did the squadron return to the United States?', 'the prevailing sickness'],
    ['From which island had the unlicensed piracies been almost entirely destroyed?', 'Cuba'],
    ['In which neighboring island did the piracies continue?', 'Porto Rico'],
    ['Under the abusive issue of what were the piracies committed?', 'Spanish commissions'],
  ]],
  ['train', 'Under this impression I recommend a review of the tariff', 5, [
    ['What does Monroe recommend a review of?', 'the tariff'],
    ['By how much was the sum remaining unaccounted for less than a year before?', 'more than $1.5 millions'],
    ['By about how much were the unsettled accounts reduced?', 'nearly $1 million'],
    ['To whose report does Monroe refer for more precise details?', 'the first Comptroller of the Treasury'],
  ]],
  ['dev', 'Of events in that quarter of the globe, with which we have so much intercourse', 4, [
    ['In the wars of which powers has the United States never taken any part?', 'the European powers'],
    ['When does the United States resent injuries or prepare for its defense?', 'when our rights are invaded or seriously menaced'],
  ]],
  ['train', 'Each Government, confiding in its own strength', 5, [
    ['From what do we derive our blessings, according to Monroe?', 'the excellence of our institutions'],
  ]],
  // ---- 1862 Abraham Lincoln
  ['train', 'Fellow-Citizens of the Senate and House of Representatives: Since your last annual assembling', 4, [
    ['What has it not pleased the Almighty to bless the country with?', 'a return of peace'],
    ['In which month were there grounds to expect the maritime powers to recede?', 'June'],
    ['What had the maritime powers recognized the insurgents as?', 'a belligerent'],
  ]],
  ['train', 'This statement especially applies to Mexico', 5, [
    ['The convention with which Republic closed without passing upon all the claims?', 'New Granada'],
    ['With which Republic did a joint commission complete its labors?', 'Costa Rica', 1],
    ['From which city would a Pacific telegraph extend?', 'San Francisco'],
    ['Across which empire is a telegraph line being extended?', 'the Russian Empire'],
  ]],
  ['dev', 'The expenditures show a still more favorable result.', 5, [
    ['How much was expended in 1861?', '$13,606,759.11'],
    ['What was the deficiency in the Department for the previous year?', '$4,551,966.98'],
  ]],
  ['train', 'On the 22d day of September last a proclamation was issued', 5, [
    ['On what day was the proclamation issued?', 'the 22d day of September'],
    ['What does Lincoln recall the attention of Congress to?', 'compensated emancipation'],
    ['What does a nation consist of?', 'its territory, its people, and its laws'],
    ['Which part of a nation is of certain durability?', 'The territory'],
  ]],
  ['train', 'And this is true, wherever a dividing or boundary line may be fixed.', 5, [
    ['South of which State might the boundary line be placed?', 'Kentucky'],
    ['North of which State might the boundary line be placed?', 'Ohio'],
    ['In which directions do the outlets of the interior region run?', 'east, west, and south'],
  ]],
  ['dev', 'It also provides for compensation, and generally the mode of making it.', 5, [
    ['In a certain sense, what is the liberation of slaves?', 'the destruction of property'],
    ['How does Lincoln describe the measure?', 'both just and economical'],
  ]],
  ['train', '1790 - 3,929,827', 4, [
    ['What was the population in 1790?', '3,929,827'],
    ['What was the population in 1860?', '31,443,790'],
    ['What was the average decennial increase in population?', '34.60 per cent'],
    ['Around which year might the country be as populous as Europe?', '1925'],
  ]],
  // ---- 1901 Theodore Roosevelt
  ['train', 'To the Senate and House of Representatives: The Congress assembles this year', 5, [
    ['Which President was shot by an anarchist?', 'President McKinley'],
    ['In which city was the Pan-American Exposition held?', 'Buffalo'],
    ['On what day was McKinley shot?', 'the sixth of September'],
    ['Which President fell to the revengeful vanity of a disappointed office-seeker?', 'President Garfield', 1],
  ]],
  ['dev', 'The anarchist, and especially the anarchist in the United States', 5, [
    ['What does the man who apologizes for anarchists make himself?', 'morally accessory to murder before the fact'],
    ['Of what is the anarchist the deadly foe?', 'liberty'],
  ]],
  ['train', 'If the business world loses its head', 5, [
    ['On what must the welfare of each citizen rest?', 'individual thrift and energy, resolution, and intelligence'],
    ['During which part of the nineteenth century did industrial development accelerate?', 'the latter half'],
  ]],
  ['train', 'All this is true; and yet it is also true that there are real and grave evils', 4, [
    ['What is one of the chief real and grave evils?', 'over-capitalization'],
    ['What are the great corporations known as?', 'trusts'],
  ]],
  ['train', 'I regard it as necessary, with this end in view, to re-enact immediately', 5, [
    ['Which laborers should the law exclude?', 'Chinese laborers'],
    ['Whose competition in the open labor market should be done away with?', 'convict contract labor'],
    ['Which law should be made easy and certain to enforce?', 'the eight-hour law'],
    ['Who should be protected from excessive hours of labor?', 'women and children'],
  ]],
  ['dev', 'Nothing could be more unwise than to disturb the business interests', 5, [
    ['What do sweeping revisions of the tariff tend to produce?', 'conditions closely approaching panic in the business world'],
    ['What does Roosevelt most wish to avoid?', 'Doubt, apprehension, uncertainty'],
  ]],
  ['train', 'Moreover, the currency of the country should be made responsive', 5, [
    ['Thanks mainly to what do collections exceed ordinary expenditures?', 'the reduced army expenditures'],
    ['What does Roosevelt call special attention to?', 'the need of strict economy in expenditures'],
  ]],
  // ---- 1913 Woodrow Wilson
  ['train', 'Gentlemen of the Congress: In pursuance of my constitutional duty', 4, [
    ['What is the constitutional duty Wilson is pursuing?', 'give to the Congress information of the state of the Union'],
    ['Whose reports will Wilson submit to the Congress?', 'the heads of the several departments'],
  ]],
  ['dev', 'It originated in the usurpation of Victoriano Huerta', 5, [
    ['Whose usurpation caused the troubles?', 'Victoriano Huerta'],
    ['What has Huerta declared himself?', 'dictator'],
  ]],
  ['train', 'The farmers, of course, ask and should be given no special privilege', 5, [
    ['Who should be given no special privilege?', 'The farmers'],
    ['What is fundamental to the life of the Nation?', 'the production of its food'],
  ]],
  ['train', 'We lag behind many other great countries of the modern world', 5, [
    ['Where have systems of rural credit been studied and developed?', 'on the other side of the water'],
    ['What did the Congress recently authorize the creation of?', 'a special commission'],
  ]],
  ['train', 'These are all matters of vital domestic concern', 5, [
    ['Which territories over sea does Wilson name?', 'Porto Rico, Hawaii, the Philippines'],
    ['What are we with respect to the territories over sea?', 'trustees'],
  ]],
  ['dev', 'These the Government should itself build and administer', 5, [
    ['Where does the Government have a freer hand in working out the problem?', 'Alaska'],
    ['Of what general problem is the exploitation of resources a part?', 'conservation'],
  ]],
  ['train', 'Law is the machinery for its realization', 5, [
    ['Where is the international congress on safety at sea sitting?', 'London'],
    ['Whose employment is surrounded by very unsafe, unjust, and burdensome conditions?', 'sailors'],
    ['For how long had the Congress been concentrating on legislation?', 'the past seven months'],
  ]],
  // ---- 1934 Franklin D. Roosevelt
  ['train', 'Mr. President, Mr. Speaker, Senators and Representatives in Congress: I come before you at the opening', 4, [
    ['The regular session of which Congress is opening?', 'the 73d Congress'],
    ['What cannot go back?', 'Civilization'],
  ]],
  ['train', 'It was your fine understanding of the national problem', 5, [
    ['Which Congress faced a task no greater than this one?', 'the First Congress of 1789'],
    ['When was the crisis experienced?', 'last March'],
    ['Through which Act was the credit of the Government fortified?', 'the Economy Act'],
  ]],
  ['dev', 'Uniform standards of hours and wages apply today', 5, [
    ['What share of industrial employment do uniform standards of hours and wages apply to?', '95 percent'],
    ['Under which Act do the uniform standards apply?', 'the National Industrial Recovery Act'],
  ]],
  ['train', 'I look forward, however, to the time in the not distant future', 5, [
    ['Where did the American Republics assemble for the conference?', 'Montevideo'],
    ['What will the national plan eliminate?', 'the use of inefficient tools'],
  ]],
  ['train', 'These violations of ethics and these violations of law call on the strong arm', 5, [
    ['Which amendment should help eliminate crimes from the illegal traffic in liquor?', 'the Twenty-first Amendment'],
    ['From what will recovery move to publicly supported work?', 'direct relief'],
  ]],
  ['train', 'Disorder is not an American habit.', 5, [
    ['What is not an American habit?', 'Disorder'],
    ['What are the essence of the American tradition?', 'Self-help and self-control'],
    ['Where does the program itself come from?', 'the American people'],
  ]],
  ['dev', 'A final personal word.', 5, [
    ['What did the letter of the Constitution wisely declare?', 'a separation'],
    ['Between which branches is a strong and permanent tie being built?', 'the legislative and executive branches'],
  ]],
  // ---- 1962 John F. Kennedy
  ['train', 'Mr. Vice President, my old colleague from Massachusetts', 4, [
    ['Who is the new Speaker?', 'John McCormack'],
    ['Which Congress is Kennedy addressing?', 'the 87th Congress'],
    ['Who is gone, leaving the House and the Nation not the same?', 'Rayburn'],
  ]],
  ['train', 'Among the bills now pending before you', 5, [
    ['Which arbitrary devices should no longer deny the right to vote?', 'literacy tests and poll taxes'],
    ['Which anniversary of the Emancipation Proclamation is approaching?', 'the 100th anniversary'],
  ]],
  ['train', 'Last year, we improved the diet of needy people', 4, [
    ['What did school children get more of?', 'hot lunches and fresh milk'],
    ['What does Kennedy urge to establish besides aid to medical and dental colleges?', 'new National Institutes of Health'],
  ]],
  ['train', 'EDUCATION Equally important to our strength is the quality of our education.', 5, [
    ['How many adult Americans are classified as functionally illiterate?', 'Eight million'],
  ]],
  ['train', 'Yet nearly half lack either the funds or the facilities', 4, [
    ['In how many years are college enrollments going to double?', '10 years'],
    ['What is the annual cost per student now averaging?', '$1,650 a year'],
  ]],
  ['dev', 'I sent to the Congress last year a proposal for Federal aid', 6, [
    ['Who said that civilization is a race between education and catastrophe?', 'H. G. Wells'],
    ['Civilization is a race between what?', 'education and catastrophe'],
  ]],
  ['train', 'Our instrument and our hope is the United Nations', 5, [
    ['What is our instrument and our hope?', 'the United Nations', 0],
  ]],
  ['train', 'A newly unified Agency for International Development', 5, [
    ['Which agency is reorienting foreign assistance?', 'Agency for International Development'],
    ['In how many countries is the Peace Corps helping people?', 'fourteen countries'],
    ['Which program is feeding the hungry of many lands?', 'Food for Peace Program'],
  ]],
  ['dev', 'TRADE Above all, if we are to pay for our commitments abroad', 4, [
    ['What is the greatest challenge of all?', 'the growth of the European Common Market'],
    ['What must we expand to pay for our commitments abroad?', 'our exports'],
  ]],
  ['train', 'Members of the Congress: The United States did not rise to greatness', 4, [
    ['At what rate is the Common Market growing?', 'twice ours'],
    ['Which economic offensive is under way?', 'The Communist economic offensive'],
  ]],
  // ---- 1985 Ronald Reagan
  ['train', 'Mr. Speaker, Mr. President, distinguished Members of the Congress, honored guests', 5, [
    ['After how many years of united effort was the nation renewed?', '4 years'],
    ['What must be our guiding stars?', 'faith and freedom'],
  ]],
  ['train', 'Let us move together with an historic reform of tax simplification', 5, [
    ['Who was asked to develop a plan to simplify the tax code?', 'Regan'],
    ['By how much have tax rates been cut?', 'almost 25 percent'],
  ]],
  ['train', 'And tonight, I am instructing Treasury Secretary James Baker', 5, [
    ['Whom is Reagan instructing to work on bipartisan legislation?', 'Treasury Secretary James Baker'],
  ]],
  ['dev', 'There are some who say that growth initiatives must await final action', 4, [
    ['What is the best way to reduce deficits?', 'economic growth'],
  ]],
  ['train', 'In just one set of grant programs we have reduced 905 pages', 5, [
    ['How many pages of regulations were reduced to 31?', '905'],
    ['What does Reagan seek to fully deregulate?', 'natural gas'],
    ['What should be returned to the private sector?', 'Conrail'],
  ]],
  ['train', 'The couple draping their door with locks and chains are victims', 5, [
    ['Who cannot ride a subway home without being afraid?', 'the tired, decent cleaning woman'],
    ['How many drug offenders have been convicted?', 'over 7,400'],
    ['For the first time in how many years has the crime index fallen 2 years in a row?', '20 years'],
  ]],
  ['dev', 'Look to where peace and prosperity flourish today.', 5, [
    ['Where do peace and prosperity flourish?', 'in homes that freedom built'],
    ['What is freedom\'s success?', 'America\'s economic success'],
  ]],
  ['train', 'Go to her house some night', 5, [
    ['Where is Mother Hale from?', 'Harlem'],
    ['What is the oldest American saying?', 'Anything is possible in America if we have the faith, the will, and the heart'],
  ]],
  // ---- 2000 William J. Clinton
  ['train', 'Mr. Speaker, Mr. Vice President, Members of Congress, honored guests, my fellow Americans: We are fortunate', 4, [
    ['How many new jobs does the new century begin with?', 'over 20 million'],
    ['The first back-to-back surpluses in how many years?', '42 years'],
  ]],
  ['train', 'Beyond paying off the debt, we must ensure that the benefits of debt reduction', 5, [
    ['Which two guarantees should benefit from debt reduction?', 'Social Security and Medicare'],
    ['To which fund should the interest savings be credited?', 'the Social Security Trust Fund'],
  ]],
  ['dev', 'We simply must act now to strengthen and modernize Medicare.', 4, [
    ['How much of the budget surplus is dedicated to keeping Medicare solvent?', 'nearly $400 billion'],
    ['Past which year would Medicare be kept solvent?', '2025'],
  ]],
  ['train', 'Nothing does that better than the earned-income tax credit', 6, [
    ['What is the "E" in the EITC about?', 'earning'],
    ['How many Americans did the EITC help out of poverty in 1998?', 'more than 4.3 million'],
    ['What penalty would the EITC expansion reduce?', 'the marriage penalty'],
  ]],
  ['train', 'Now he\'s got a good job, and he supports his little boy.', 5, [
    ['How many more fathers will the budget help?', '40,000'],
    ['Who is the father Clinton thanks for being there?', 'Carlos Rosas'],
  ]],
  ['train', 'For business, it\'s the smart thing to do.', 5, [
    ['How much private-sector capital would the new markets tax credit spur?', '$22 billion'],
    ['Where would the new businesses and investments be created?', 'our inner cities and rural areas'],
  ]],
  ['dev', 'All we can do is decide what we\'re going to do.', 5, [
    ['Which country should choose the right future?', 'China'],
    ['What must we be where our interests are at stake?', 'peacemakers'],
  ]],
  ['train', 'But one of the things I\'m grateful for is the opportunity that the Vice President and I', 5, [
    ['How many neighborhoods have been rid of toxic waste?', 'more than 500'],
    ['How many acres of roadless lands were preserved?', '40 million acres'],
    ['Which redwoods does the conservation fund aim to save?', 'the California redwoods'],
  ]],
  // ---- 2016 Barack Obama
  ['train', 'Mr. Speaker, Mr. Vice President, Members of Congress, my fellow Americans: Tonight marks the eighth year', 4, [
    ['Which year of reporting on the State of the Union does tonight mark for Obama?', 'the eighth year'],
    ['Where are some members antsy to get back to?', 'Iowa'],
  ]],
  ['train', 'So let\'s talk about the future and four big questions', 3, [
    ['How many big questions does Obama want to talk about?', 'four'],
    ['Which urgent challenge should technology help solve?', 'climate change'],
  ]],
  ['train', 'Companies have less loyalty to their communities.', 5, [
    ['What is concentrated at the very top?', 'wealth and income'],
    ['Which belief do these trends offend?', 'everybody who works hard should get a fair shot'],
  ]],
  ['train', 'Sixty years ago, when the Russians beat us into space', 5, [
    ['What did the Russians put into space sixty years ago?', 'Sputnik'],
    ['How many years later were Americans walking on the Moon?', '12 years'],
  ]],
  ['train', 'America is Thomas Edison and the Wright Brothers', 5, [
    ['Which scientist is named alongside Thomas Edison and the Wright Brothers?', 'George Washington Carver'],
    ['Which astronaut is named with Grace Hopper and Katherine Johnson?', 'Sally Ride'],
  ]],
  ['dev', 'Our troops are the finest fighting force in the history of the world.', 5, [
    ['Who are the finest fighting force in the history of the world?', 'Our troops'],
    ['To which capitals do the people of the world not look to lead?', 'Beijing or Moscow'],
  ]],
  ['train', 'With TPP, China does not set the rules in that region', 5, [
    ['Under which agreement does China not set the rules in that region?', 'TPP'],
  ]],
  ['train', 'The world respects us not just for our arsenal', 4, [
    ['Who told Congress that imitating tyrants is the best way to take their place?', 'His Holiness Pope Francis'],
  ]],
  ['train', 'I know; you\'ve told me.', 5, [
    ['Where is it the worst kept secret?', 'Washington'],
  ]],
  ['dev', 'And that\'s why I stand here as confident as I have ever been', 5, [
    ['What is the state of our Union?', 'strong'],
  ]],
]

const lines = readFileSync(join(root, 'fixtures', 'corpus.txt'), 'utf8').split('\n')
// address index of every line (blank lines separate addresses)
const addressOf = []
let address = 0
for (const l of lines) {
  if (l.trim() === '') address++
  addressOf.push(l.trim() === '' ? -1 : address)
}
if (address + 1 < TITLES.length) throw new Error(`corpus.txt has ${address + 1} addresses, expected ${TITLES.length}`)

const codePoints = (s) => [...s].length
const fail = (msg) => {
  console.error(`make-demo-squad: ${msg}`)
  process.exit(1)
}

const out = {train: new Map(), dev: new Map()}
const used = new Map() // corpus line → split, so that dev and train paragraphs share no sentence
const ids = new Set()
for (const [split, anchor, n, qas] of PARAGRAPHS) {
  if (n < 3 || n > 6) fail(`${anchor}: ${n} sentences (3-6 expected)`)
  const starts = lines.flatMap((l, i) => (l.startsWith(anchor) ? [i] : []))
  if (starts.length !== 1) fail(`anchor ${JSON.stringify(anchor)} starts ${starts.length} lines, not 1`)
  const first = starts[0]
  const a = addressOf[first]
  for (let i = first; i < first + n; i++) {
    if (addressOf[i] !== a) fail(`${anchor}: the paragraph runs past its address`)
    if (used.has(i) && used.get(i) !== split) fail(`${anchor}: line ${i + 1} is in both train and dev`)
    used.set(i, split)
  }
  const context = lines.slice(first, first + n).join(' ')
  const title = TITLES[a]
  const year = title.slice(0, 4)
  const article = out[split].get(title) ?? {title, paragraphs: []}
  out[split].set(title, article)
  const paragraph = {context, qas: []}
  article.paragraphs.push(paragraph)
  qas.forEach(([question, text, occurrence], k) => {
    const at = []
    for (let i = context.indexOf(text); i >= 0; i = context.indexOf(text, i + 1)) at.push(i)
    if (at.length === 0) fail(`${anchor}: answer ${JSON.stringify(text)} is not in the paragraph`)
    if (at.length > 1 && occurrence === undefined) fail(`${anchor}: answer ${JSON.stringify(text)} occurs ${at.length} times; give an occurrence index`)
    const start = at[occurrence ?? 0]
    if (start === undefined) fail(`${anchor}: answer ${JSON.stringify(text)} has no occurrence ${occurrence}`)
    const id = `sotu${year}-l${first + 1}-q${k + 1}`
    if (ids.has(id)) fail(`duplicate id ${id}`)
    ids.add(id)
    paragraph.qas.push({id, question, answers: [{text, answer_start: codePoints(context.slice(0, start))}]})
  })
}

const dir = join(root, 'fixtures', 'squad-demo')
mkdirSync(dir, {recursive: true})
for (const split of ['train', 'dev']) {
  const data = TITLES.flatMap((t) => (out[split].has(t) ? [out[split].get(t)] : []))
  writeFileSync(join(dir, `${split}.json`), JSON.stringify({version: '1.1', data}, null, 1) + '\n')
  const paragraphs = data.reduce((s, d) => s + d.paragraphs.length, 0)
  const questions = data.reduce((s, d) => s + d.paragraphs.reduce((t, p) => t + p.qas.length, 0), 0)
  console.error(`make-demo-squad: ${split}.json: ${data.length} addresses, ${paragraphs} paragraphs, ${questions} questions`)
}
